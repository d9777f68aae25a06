"""The example plugin, on the Workbench plugin SDK (standard library only besides it)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from workbench_plugin_sdk import Call, Env, Server, StatusError, read_manifest, structured_result, text_result

env = Env.load()
manifest = read_manifest()
data = Path(env.data)


def settings() -> dict:
    try:
        return env.client().channel().get("settings", {})
    except Exception:  # noqa: BLE001 — no Plugin API (a test of the server alone)
        return {}


def echo(arguments: dict, call: Call) -> dict:
    count = int(settings().get("count", 1))
    return text_result(" ".join([arguments["text"]] * count))


def score(arguments: dict, call: Call) -> dict:
    answer = arguments["answer"]
    return structured_result({"score": min(10, len(answer)), "verdict": "long" if len(answer) > 5 else "short"})


def ping(call: Call) -> None:
    (data / "pings.jsonl").open("a").write(json.dumps({"trigger": call.trigger, "at": time.time()}) + "\n")


def ask(call: Call) -> None:
    """Start a run of the agent ``say``; its end comes to ``run_done``."""
    try:
        run_id = env.client().start_run("say", "Say hello through the echo tool.")
    except StatusError as exc:  # 429: the day's runs are used up
        (data / "runs.jsonl").open("a").write(json.dumps({"status": f"refused {exc.status}"}) + "\n")
        return
    (data / "runs.jsonl").open("a").write(json.dumps({"run_id": run_id, "status": "started"}) + "\n")


def run_done(run_id: str, body: dict) -> None:
    (data / "runs.jsonl").open("a").write(json.dumps({"run_id": run_id, "status": body.get("status"),
                                                      "result": body.get("result")}) + "\n")


def event(body: dict) -> None:
    (data / "events.jsonl").open("a").write(json.dumps({"type": body.get("type"),
                                                        "thread_id": body.get("thread_id")}) + "\n")


def _lines(name: str) -> list[dict]:
    path = data / name
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def pane() -> dict:
    """The pane ``main``: how many pings came, and a form that scores an answer."""
    return {"type": "AdaptiveCard", "version": "1.5", "body": [
        {"type": "TextBlock", "text": "Echo", "size": "large", "weight": "bolder"},
        {"type": "FactSet", "facts": [{"title": "Pings", "value": str(len(_lines("pings.jsonl")))},
                                      {"title": "Runs", "value": str(len(_lines("runs.jsonl")))}]},
        {"type": "Input.Text", "id": "answer", "label": "Answer", "isRequired": True, "maxLength": 200}],
        "actions": [{"type": "Action.Execute", "title": "Score", "verb": "score"},
                    {"type": "Action.Execute", "title": "Post a card", "verb": "card"}]}


def post_card(call: Call) -> None:
    """The action ``card``: a card for the notification drawer."""
    env.client().post_card("A card from Echo", {"type": "AdaptiveCard", "version": "1.5", "body": [
        {"type": "TextBlock", "text": "Hello from the echo plugin", "weight": "bolder"},
        {"type": "FactSet", "facts": [{"title": "Trigger", "value": call.trigger or "manual"}]}]})


def mode(on: bool, call: Call) -> dict:
    """The composer switch ``mode``: kept per chat in the data folder."""
    (data / "modes.jsonl").open("a").write(json.dumps({"thread_id": call.thread_id, "on": on}) + "\n")
    return {"on": on, "title": "Mode is on" if on else "Mode is off"}


def x(method: str, path: str, body: bytes) -> tuple[int, object]:
    if path == "/panes/main":
        return 200, {"card": pane()}
    if path == "/pings":
        return 200, {"pings": len(_lines("pings.jsonl"))}
    if path == "/events":
        return 200, {"events": _lines("events.jsonl")}
    if path == "/runs":
        return 200, {"runs": _lines("runs.jsonl")}
    return 404, {"error": "no such route"}


if __name__ == "__main__":
    server = Server(secret=env.secret(), version=manifest["version"], tools={"echo": echo, "score": score},
                    actions={"ping": ping, "daily": ping, "ask": ask, "card": post_card}, x=x,
                    runs_done=run_done, events=event, switches={"mode": mode})
    print(f"echo plugin serving, pid {os.getpid()}", flush=True)
    server.serve(env.listener())
