"""The example plugin, on the Workbench plugin SDK (standard library only besides it)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from workbench_plugin_sdk import Call, Env, Server, read_manifest, structured_result, text_result

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


def x(method: str, path: str, body: bytes) -> tuple[int, object]:
    if path == "/pings":
        lines = (data / "pings.jsonl").read_text().splitlines() if (data / "pings.jsonl").exists() else []
        return 200, {"pings": len(lines)}
    return 404, {"error": "no such route"}


if __name__ == "__main__":
    server = Server(secret=env.secret(), version=manifest["version"], tools={"echo": echo, "score": score},
                    actions={"ping": ping, "daily": ping}, x=x)
    print(f"echo plugin serving, pid {os.getpid()}", flush=True)
    server.serve(env.listener())
