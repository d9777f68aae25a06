"""ctx as the format describes it, in Python and Deno workers through the real host:
``getChatContext().locale`` is the person's locale (the environment's, or the config's),
and ``ctx.log`` lines reach the host's log file and the call's record (``sessions show``)
as well as the event stream."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from commands import workbench

from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.events import ToolCallLog

PY_ENTRY = '''
def tend(args, ctx):
    ctx.log("debug", "looking at the fern")
    ctx.log("info", "watered the fern")
    ctx.log("warn", "the soil is dry")
    ctx.log("error", "a leaf fell")
    return ctx.get_chat_context()
'''

TS_ENTRY = '''
export async function tend(args: unknown, ctx: any) {
  ctx.log("debug", "looking at the fern");
  ctx.log("info", "watered the fern");
  ctx.log("warn", "the soil is dry");
  ctx.log("error", "a leaf fell");
  return ctx.getChatContext();
}
'''

LINES = [("debug", "looking at the fern"), ("info", "watered the fern"),
         ("warn", "the soil is dry"), ("error", "a leaf fell")]


def install(tmp_path: Path, runtime: str) -> None:
    folder = tmp_path / f"garden-{runtime}"
    folder.mkdir()
    manifest = {"name": f"garden-{runtime}", "displayName": "Garden", "description": "Ferns.",
                "tools": [{"name": "tend", "description": "Tend the fern. Use when asked.",
                           "parameters": {"type": "object"}, "function": "tend"}]}
    (folder / "loca.json").write_text(json.dumps(manifest))
    (folder / ("index.ts" if runtime == "deno" else "main.py")).write_text(
        TS_ENTRY if runtime == "deno" else PY_ENTRY)
    done = workbench("ext", "install", str(folder), "--yes")
    assert done.returncode == 0, done.stderr


@pytest.fixture
def posix_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.setenv("LC_MESSAGES", "C")  # names no language: LANG says it
    monkeypatch.setenv("LANG", "pt_BR.UTF-8")


@pytest.mark.parametrize("runtime", ["python", "deno"])
async def test_locale_and_log_lines_reach_the_tool_the_file_and_the_record(
        runtime, tmp_path, posix_locale):
    install(tmp_path, runtime)
    home = Path(os.environ["WORKBENCH_HOME"])
    with Host.open(cwd=tmp_path / "work") as host:
        seen = []
        host.bus.subscribe(seen.append)
        outcome = await host.tools.call("tend", {}, CallOptions(user_message="tend the fern"))
        assert outcome.ok, outcome.error
        assert outcome.result == {"userMessage": "tend the fern", "sessionId": None,
                                  "locale": "pt-BR", "projectFolder": str(tmp_path / "work"),
                                  "reviewWrites": True, "consumer": "person", "dataFolder": None}
        assert [(e.level, e.message) for e in seen if isinstance(e, ToolCallLog)] == LINES
        record = host.chats.call_log(outcome.call_id)
    assert [(line["level"], line["message"]) for line in record] == LINES
    logged = (home / "logs" / "tools.log").read_text().splitlines()
    mine = [line for line in logged if outcome.call_id in line]
    assert [line.split(" ", 3)[2] for line in mine] == ["DEBUG", "INFO", "WARNING", "ERROR"]
    assert mine[1].endswith(f"garden-{runtime}.tend [{outcome.call_id}] watered the fern")


async def test_the_config_locale_wins_over_the_environment(tmp_path, posix_locale):
    install(tmp_path, "python")
    home = Path(os.environ["WORKBENCH_HOME"])
    (home / "config.toml").write_text('locale = "de_DE.UTF-8"\n')
    with Host.open(cwd=tmp_path / "work") as host:
        outcome = await host.tools.call("tend", {}, CallOptions())
    assert outcome.ok, outcome.error
    assert outcome.result["locale"] == "de-DE"


async def test_a_chats_call_shows_its_log_in_sessions_show(tmp_path, posix_locale):
    install(tmp_path, "deno")
    script = tmp_path / "model.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "tend", "arguments": {}}]},
                                  {"text": "The fern is tended."}]))
    with Host.open(cwd=tmp_path / "work", model=f"scripted:{script}") as host:
        turn = await host.chats.send_prompt("tend the fern")
    assert (turn.status, turn.text) == ("done", "The fern is tended."), turn
    shown = workbench("sessions", "show", turn.session_id)
    assert shown.returncode == 0, shown.stderr
    assert "    info  watered the fern\n    warn  the soil is dry\n" in shown.stdout
    as_json = workbench("sessions", "show", turn.session_id, "--json")
    [lines] = json.loads(as_json.stdout)["call_logs"].values()
    assert [(line["level"], line["message"]) for line in lines] == LINES


async def test_a_provider_is_told_the_locale_too(tmp_path, posix_locale):
    folder = tmp_path / "speaks"
    folder.mkdir()
    (folder / "loca.json").write_text(json.dumps({
        "name": "speaks", "displayName": "Speaks", "description": "A model.", "entry": "main.py",
        "providers": [{"type": "model", "name": "polyglot", "function": "polyglot"}]}))
    (folder / "main.py").write_text(
        "def polyglot(request, ctx):\n"
        "    return {'text': ctx.get_chat_context()['locale']}\n")
    done = workbench("ext", "install", str(folder), "--yes")
    assert done.returncode == 0, done.stderr
    with Host.open(cwd=tmp_path / "work") as host:
        host.loading.ensure()
        provider = host.providers.registry.get("model", "speaks", "polyglot")
        answer = await host.providers.runtime.call(
            provider, {"messages": [{"role": "user", "content": "hi"}]})
    assert answer["text"] == "pt-BR"
