"""Per chat: its model and its project folder are kept with the session, and resuming a
session — ``Host.send_prompt``, ``workbench run --session`` — uses them, not the host's
current ones; ``sessions set-model`` changes a session's model and refuses a bad spec."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from commands import workbench

from workbench.config.trust import trust_project as trust_config
from workbench.core.host import Host
from workbench.errors import ExitCode, WorkbenchError
from workbench.events import Notice


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return workbench(*args, cwd=cwd)


def trust_project(home, root: Path) -> None:
    """Trust the project's config and consent to its extensions' code as it is now."""
    from workbench.ext.manager import ExtensionManager
    from workbench.store import Store

    trust_config(home, root)
    with Store.open(home.db_path) as store:
        manager = ExtensionManager(home, store, registry_url="http://127.0.0.1:9")
        for folder in sorted((root / ".workbench" / "extensions").glob("*")):
            manager.trust_project(folder)


@pytest.fixture
def project(tmp_path, home) -> Path:
    """A trusted project: its config sets a tool timeout, it carries a project extension
    whose tool tells where it runs, and a script (by a relative path) that calls it."""
    root = tmp_path / "project"
    (root / ".workbench").mkdir(parents=True)
    (root / ".workbench" / "config.toml").write_text("[tools]\ntimeout_ms = 12345\n")
    here = root / ".workbench" / "extensions" / "here"
    here.mkdir(parents=True)
    (here / "loca.json").write_text(json.dumps({
        "name": "here", "displayName": "Here", "description": "Where tools run.", "entry": "main.py",
        "tools": [{"name": "where_am_i", "description": "The folder the tool runs in.",
                   "parameters": {"type": "object"}, "function": "where_am_i"}]}))
    (here / "main.py").write_text("import os\n\ndef where_am_i(args, ctx):\n"
                                  "    return {'cwd': os.getcwd()}\n")
    trust_project(home, root)
    replies = [{"text": "first"},
               {"tool_calls": [{"id": "w1", "name": "where_am_i", "arguments": {}}]},
               {"text": "second"}]
    (root / "chat.json").write_text(json.dumps(replies))
    return root


@pytest.fixture
def elsewhere(tmp_path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


async def made_in(project: Path) -> str:
    """A session started in ``project`` with its script (a path relative to it)."""
    async with Host.open(cwd=project, model="scripted:chat.json") as host:
        result = await host.chats.send_prompt("hello")
        assert result.text == "first"
        session = host.chats.get(result.session_id)
        assert (session["model"], session["folder"]) == ("scripted:chat.json", str(project))
        return result.session_id


async def test_resuming_a_session_uses_its_model_and_folder_not_the_hosts(project, elsewhere):
    session_id = await made_in(project)
    async with Host.open(cwd=elsewhere, model="echo") as host:
        assert "here.where_am_i" not in [t.qualified_name for t in host.switches.tools()]
        result = await host.chats.send_prompt("where are you?", session_id)
        assert (result.status, result.text) == ("done", "second")
        assert host.cwd == project
        assert host.config.get("tools.timeout_ms") == 12345  # the project's trusted config
        [where] = [json.loads(m["content"]) for m in host.chats.messages(session_id) if m["role"] == "tool"]
        assert where == {"ok": True, "result": {"cwd": str(project)}}
        # The host's own model is still the one it was opened with, for new chats.
        assert host.chats.get(host.chats.new()["id"])["model"] == "echo"


async def test_a_session_made_before_it_kept_a_folder_follows_the_host(home, elsewhere):
    async with Host.open(cwd=elsewhere, model="echo") as host:
        old = host.store.create_session(title="old")  # no model, no folder: as before m006
        assert (await host.chats.send_prompt("hi", old["id"])).text == "You said: hi"
        assert host.cwd == elsewhere


async def test_a_session_whose_folder_is_gone_runs_where_the_host_is_and_says_so(home, tmp_path, elsewhere):
    gone = tmp_path / "gone"
    gone.mkdir()
    async with Host.open(cwd=gone, model="echo") as host:
        session_id = (await host.chats.send_prompt("hi")).session_id
    gone.rmdir()
    notices = []
    async with Host.open(cwd=elsewhere, model="echo") as host:
        host.bus.subscribe(lambda event: notices.append(event) if isinstance(event, Notice) else None)
        assert (await host.chats.send_prompt("again", session_id)).status == "done"
        assert host.cwd == elsewhere
    assert [n.message for n in notices] == [
        f"the folder of session {session_id[:12]}, {gone}, is gone; working in {elsewhere}"]


async def test_set_session_model_keeps_a_good_spec_and_refuses_a_bad_one(project, elsewhere):
    session_id = await made_in(project)
    async with Host.open(cwd=elsewhere, model="echo") as host:
        before = host.chats.get(session_id)
        for spec, words in (("", "a model spec cannot be empty"),
                            ("gpt-4", "unknown model 'gpt-4'; known: auto, echo"),
                            ("echo:loud", "echo takes no argument"),
                            ("ext:nobody", "write ext:EXTENSION/PROVIDER"),
                            ("ext:nobody/model", "no model provider 'model' in the extension 'nobody'"),
                            ("scripted:missing.json", "cannot read the scripted model file")):
            with pytest.raises(WorkbenchError, match=words) as caught:
                host.chats.set_model(session_id, spec)
            assert caught.value.exit_code == ExitCode.USAGE
        assert host.chats.get(session_id) == before
        # A relative script is read from the session's folder, not the host's.
        (project / "other.json").write_text(json.dumps([{"text": "x"}] * 4))
        assert host.chats.set_model(session_id[:8], "scripted:other.json")["model"] == "scripted:other.json"
        with pytest.raises(WorkbenchError, match="no session"):
            host.chats.set_model("nosuchsession", "echo")
        changed = host.chats.set_model(session_id, " echo ")
        assert changed["model"] == "echo"
        assert (await host.chats.send_prompt("hi", session_id)).text == "You said: hi"
        assert ("session.model", session_id) in [(e["action"], e["subject"])
                                                 for e in host.store.list_audit(limit=20)]


def test_the_cli_resumes_in_the_sessions_folder_and_changes_its_model(project, elsewhere):
    done = cli("run", "--model", "scripted:chat.json", "hello", cwd=project)
    assert (done.returncode, done.stdout) == (0, "first\n"), done.stderr
    session_id = json.loads(cli("sessions", "list", "--json", cwd=elsewhere).stdout)[0]["id"]

    shown = cli("sessions", "show", session_id[:8], cwd=elsewhere)
    assert f"model   scripted:chat.json\nfolder  {project}\n" in shown.stdout

    done = cli("run", "--session", session_id[:8], "where are you?", cwd=elsewhere)
    assert (done.returncode, done.stdout) == (0, "second\n"), done.stderr

    bad = cli("sessions", "set-model", session_id, "nonsense", cwd=elsewhere)
    assert bad.returncode == ExitCode.USAGE
    assert bad.stderr.startswith("error: unknown model 'nonsense'; known: auto, echo")
    assert cli("sessions", "show", session_id, cwd=elsewhere).stdout.count("scripted:chat.json") == 1

    changed = cli("sessions", "set-model", session_id, "echo", cwd=elsewhere)
    assert changed.stdout == f"Session {session_id[:12]} now talks to echo\n"
    done = cli("run", "--session", session_id, "hi", cwd=elsewhere)
    assert done.stdout == "You said: hi\n"

    # --model with --session becomes that session's model.
    (project / "late.json").write_text(json.dumps([{"text": "late"}] * 8))
    done = cli("run", "--session", session_id, "--model", "scripted:late.json", "again", cwd=elsewhere)
    assert done.stdout == "late\n", done.stderr
    shown = json.loads(cli("sessions", "show", session_id, "--json", cwd=elsewhere).stdout)
    assert (shown["session"]["model"], shown["session"]["folder"]) == ("scripted:late.json", str(project))
    bad = cli("run", "--session", session_id, "--model", "gpt-4", "x", cwd=elsewhere)
    assert bad.returncode == ExitCode.USAGE and "unknown model 'gpt-4'" in bad.stderr


async def test_a_scheduled_runs_chat_keeps_the_cards_model_and_folder(home, elsewhere):
    async with Host.open(cwd=elsewhere, model="echo") as host:
        row = host.schedules.add_schedule(title="Echo", instruction="hello there",
                                schedule={"kind": "interval", "everyMinutes": 5}, model="echo")
        run = await host.schedules.run_schedule_now(row["id"])
        assert run["status"] == "ok"
        session = host.chats.get(run["session_id"])
        assert (session["model"], session["folder"]) == ("echo", str(elsewhere))


async def test_a_resumed_session_runs_its_tools_under_its_folders_limits(project, elsewhere, home):
    """The chat's folder sets a 1-second tool limit: a tool that naps 30 s is stopped
    after about a second, not after the 300 s the host's own folder allows."""
    (project / ".workbench" / "config.toml").write_text(
        "[tools]\ntimeout_ms = 1000\n[hooks]\nbudget_ms = 700\n[sandbox]\nmemory_mb = 300\n")
    trust_project(home, project)
    here = project / ".workbench" / "extensions" / "here"
    manifest = json.loads((here / "loca.json").read_text())
    manifest["tools"].append({"name": "nap", "description": "Sleeps.", "function": "nap",
                              "parameters": {"type": "object"}})
    (here / "loca.json").write_text(json.dumps(manifest))
    with (here / "main.py").open("a") as module:
        module.write("\nimport time\n\ndef nap(args, ctx):\n    time.sleep(30)\n    return 'woke'\n")
    trust_project(home, project)  # its extension's code changed: consented to again
    (project / "chat.json").write_text(json.dumps([
        {"text": "first"}, {"tool_calls": [{"id": "n1", "name": "nap", "arguments": {}}]},
        {"text": "second"}]))
    session_id = await made_in(project)
    async with Host.open(cwd=elsewhere, model="echo") as host:
        assert host.gateway.default_timeout_ms == 300_000
        result = await host.chats.send_prompt("nap", session_id)
        assert (result.status, result.text) == ("done", "second")
        assert (host.gateway.default_timeout_ms, host.hook_runtime.budget_ms,
                host.sandbox.limits.memory_mb) == (1000, 700, 300)
        [nap] = [json.loads(m["content"]) for m in host.chats.messages(session_id) if m["role"] == "tool"]
        assert nap["error"] == {"kind": "timeout", "message": "the call took longer than 1 s"}
