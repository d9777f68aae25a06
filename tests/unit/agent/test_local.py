"""The local provider's supervision and context fitting, without loading a real model
(tests/integration/test_local_model.py runs the real one)."""

from __future__ import annotations

import stat
import sys

import pytest

from workbench.agent.local import LlamaServer, LocalProvider, fit
from workbench.agent.messages import ChatMessage, ToolCall
from workbench.errors import ModelError


def test_fit_keeps_the_system_prompt_and_the_last_exchange_and_cuts_long_results() -> None:
    old = [ChatMessage("user", "old question " * 50), ChatMessage("assistant", "old answer " * 50)]
    last = [ChatMessage("user", "weather?"),
            ChatMessage("assistant", "", tool_calls=[ToolCall("c1", "get_weather", {"city": "Oslo"})]),
            ChatMessage("tool", "x" * 5000, tool_call_id="c1", name="get_weather")]
    fitted = fit([ChatMessage("system", "Be brief."), *old, *last], budget_chars=1000)
    assert [m.role for m in fitted] == ["system", "user", "assistant", "tool"]
    assert fitted[1].content == "weather?"
    assert fitted[3].content == "x" * 250 + " [... 4750 more characters]"
    assert fit([ChatMessage("user", "hi")], 1000) == [ChatMessage("user", "hi")]


def test_fit_never_keeps_a_result_without_its_call() -> None:
    messages = [ChatMessage("user", "a" * 900),
                ChatMessage("assistant", "", tool_calls=[ToolCall("c1", "t", {"q": "b" * 900})]),
                ChatMessage("tool", "result", tool_call_id="c1", name="t"),
                ChatMessage("user", "next")]
    assert [m.role for m in fit(messages, 300)] == ["user"]


def test_a_model_llama_cpp_cannot_load_is_a_clear_error(tmp_path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + bytes(64))
    server = LlamaServer(broken, log_path=tmp_path / "server.log", start_timeout_s=60)
    with pytest.raises(ModelError, match=r"could not start: llama.cpp could not load .*broken.gguf"):
        server.ensure()
    assert not server.running()


def fake_python(tmp_path, body: str):
    script = tmp_path / "fake-python"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_a_server_that_never_answers_is_stopped_at_the_start_timeout(tmp_path) -> None:
    server = LlamaServer(tmp_path / "m.gguf", start_timeout_s=0.5,
                         python=fake_python(tmp_path, "exec sleep 30"))
    with pytest.raises(ModelError, match="did not start within 0.5 s"):
        server.ensure()
    assert not server.running() and server.pid is None


def test_a_server_that_exits_while_starting_quotes_its_log(tmp_path) -> None:
    log = tmp_path / "server.log"
    server = LlamaServer(tmp_path / "m.gguf", log_path=log,
                         python=fake_python(tmp_path, "echo 'out of memory' >&2; exit 3"))
    with pytest.raises(ModelError, match=r"exited while starting \(exit code 3\).*ends: out of memory"):
        server.ensure()


def test_an_address_off_loopback_is_refused(tmp_path) -> None:
    server = LlamaServer(tmp_path / "m.gguf",
                         python=fake_python(tmp_path, "echo '{\"address\": \"http://0.0.0.0:80\"}'; "
                                                      "exec sleep 30"))
    with pytest.raises(ModelError, match="could not start"):
        server.ensure()
    assert not server.running()


def test_the_provider_starts_nothing_until_used(tmp_path) -> None:
    provider = LocalProvider(tmp_path / "m.gguf", builtin=True)
    assert not provider.server.running() and provider.last_usage is None
    assert "SmolLM2-135M" in provider.notice and "running=False" in repr(provider)
    assert sys.executable == provider.server.python
