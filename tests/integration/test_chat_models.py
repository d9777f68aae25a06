"""A chat's model, as the core keeps it for both faces: a chat follows the default
unless it has its own; ``choose_model`` (the TUI's ``/model``, ``sessions model``)
checks a spec before anything is kept; ``model_info`` says whether the replies are a
real model's (a model server on loopback) or echoes; ``model_choices`` offers what
``/model`` completes; ``chat_models`` says which chats follow the default."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from strict_models import StrictModelServer

from workbench.core.host import Host
from workbench.core.run_grants import RunGrant, covering
from workbench.errors import ExitCode, WorkbenchError


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True,
                          text=True, env=dict(os.environ), cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


async def test_a_chat_follows_the_default_until_it_has_its_own(home, workdir):
    home.config_file.write_text('model = "echo"\n')
    (workdir / "replay.json").write_text(json.dumps([{"text": "replayed"}] * 3))
    async with Host.open(cwd=workdir) as host:
        assert not host.default_model.chosen
        result = await host.chats.send_prompt("hi")
        session = host.chats.get(result.session_id)
        assert session["model"] is None  # follows the default
        assert host.chat_models.model_info(session["id"]) == {
            "spec": "echo", "label": "echo", "own": False, "stand_in": True,
            "hint": host.chat_models.model_info()["hint"]}
        assert "No model is connected" in host.chat_models.model_info()["hint"]
        chosen = host.chat_models.choose_model(session["id"], "scripted:replay.json")
        assert chosen["model"] == "scripted:replay.json"
        assert (await host.chats.send_prompt("again", session["id"])).text == "replayed"
        info = host.chat_models.model_info(session["id"])
        assert (info["own"], info["stand_in"], info["hint"]) == (True, False, None)
        assert host.chat_models.chat_models() == {"default": "echo", "following": 0, "own": [
            {"id": session["id"], "title": "hi", "model": "scripted:replay.json"}]}
        other = await host.chats.send_prompt("a second chat")
        assert host.chat_models.chat_models()["following"] == 1
        # default: the chat follows the default again.
        assert host.chat_models.choose_model(session["id"], "default")["model"] is None
        assert (await host.chats.send_prompt("and now", session["id"])).text == "You said: and now"
        assert host.chat_models.chat_models()["following"] == 2 and host.chat_models.chat_models()["own"] == []
        audited = [(e["action"], e["detail"]) for e in host.store.list_audit(limit=10)
                   if e["action"] == "session.model"]
        assert audited[0][1] == {"from": "scripted:replay.json", "to": None}
        del other


async def test_choose_model_refuses_a_bad_spec_and_starts_nothing(home, workdir):
    async with Host.open(cwd=workdir, model="echo") as host:
        for spec in ("gpt-nonsense", "", "echo:loud", "scripted:missing.json", "ext:nobody/x"):
            with pytest.raises(WorkbenchError) as caught:
                host.chat_models.choose_model(None, spec)
            assert caught.value.exit_code == ExitCode.USAGE
        assert host.chats.sessions() == []
        started = host.chat_models.choose_model(None, "echo")  # a chat not started yet gets its session
        assert host.chats.get(started["id"])["model"] == "echo"
        with pytest.raises(WorkbenchError, match="unknown model 'nope'"):
            host.chat_models.choose_model(started["id"], "nope")
        assert host.chats.get(started["id"])["model"] == "echo"


async def test_a_real_model_is_not_a_stand_in(home, workdir):
    with StrictModelServer() as server:
        home.config_file.write_text(f'[openai]\nbase_url = "{server.base_url}"\n')
        async with Host.open(cwd=workdir, model="openai:gpt-test") as host:
            info = host.chat_models.model_info()
            assert (info["label"], info["stand_in"], info["hint"]) == ("openai:gpt-test", False, None)
            result = await host.chats.send_prompt("hello")
            assert result.text == "accepted"


async def test_the_choices_offer_the_known_models_local_files_and_replays(home, workdir):
    (workdir / "a.json").write_text("[]")
    (workdir / "notes.txt").write_text("not a replay")
    models = home.root / "models"
    models.mkdir(parents=True, exist_ok=True)
    (models / "tiny.gguf").write_bytes(b"GGUF" + b"\0" * 28)
    async with Host.open(cwd=workdir, model="echo") as host:
        specs = [row["spec"] for row in host.chat_models.model_choices()]
        assert specs[:4] == ["auto", "openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5", "local"]
        assert f"local:{models / 'tiny.gguf'}" in specs
        assert "scripted:a.json" in specs and not any("notes" in s for s in specs)
        assert specs[-1] == "echo"
        real = {row["spec"]: row["real"] for row in host.chat_models.model_choices()}
        assert real["echo"] is False and real["auto"] is True
        assert [row["spec"] for row in host.chat_models.model_choices(typed="scr")] == ["scripted:a.json"]
        chat = host.chats.new()["id"]
        assert host.chat_models.model_choices(chat)[0]["spec"] == "default"  # it has its own (--model)


def test_sessions_model_shows_and_switches_a_chat(home, workdir):
    assert cli("run", "--model", "echo", "hi", cwd=workdir).returncode == 0
    session_id = json.loads(cli("sessions", "list", "--json").stdout)[0]["id"]
    shown = cli("sessions", "model", session_id[:8])
    assert shown.stdout == f"Session {session_id[:12]} talks to echo: its own\n"
    assert "No model is connected" in shown.stderr
    bad = cli("sessions", "model", session_id, "gpt-nonsense")
    assert bad.returncode == ExitCode.USAGE and "unknown model 'gpt-nonsense'" in bad.stderr
    followed = cli("sessions", "set-model", session_id, "default")
    assert followed.stdout.startswith(f"Session {session_id[:12]} now follows the default model")
    info = json.loads(cli("sessions", "model", session_id, "--json").stdout)
    assert (info["own"], info["spec"]) == (False, "auto")
    assert "model   - (follows the default)" in cli("sessions", "show", session_id).stdout
    choices = cli("sessions", "model", session_id, "--choices")
    assert choices.stdout.splitlines()[0].startswith("auto ")
    switched = json.loads(cli("sessions", "model", session_id, "echo", "--json").stdout)
    assert (switched["own"], switched["stand_in"]) == (True, True)


def test_grants_cover_an_entry_of_their_kind_and_value_alone():
    read_docs = {"kind": "read", "value": "/srv/docs", "optional": False, "key": "read:/srv/docs"}
    token = {"kind": "env", "value": "TOKEN", "optional": True, "key": "env:TOKEN"}
    exact = RunGrant("read", "/srv/docs", None, "read:/srv/docs")
    assert covering((exact,), "x.peek", [read_docs, token]) == ("env:TOKEN",)
    assert covering((RunGrant("read", "/srv", None, "read:/srv"),), "x.peek", [read_docs]) is None
    assert covering((RunGrant("read", None, "x.other", "other:read"),), "x.peek", [read_docs]) is None
    assert covering((RunGrant("read", None, "x.peek", "peek:read"),), "x.peek", [read_docs]) == ()
    assert covering((RunGrant("write", None, None, "write"),), "x.peek", [read_docs]) is None
    assert covering((), "x.peek", [read_docs]) is None
