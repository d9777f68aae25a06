"""Model specs, settings, keys from the environment, and ``auto`` finding a model."""

from __future__ import annotations

import asyncio
import json

import pytest
from http_fake import Reply

from workbench.agent.anthropic import AnthropicProvider
from workbench.agent.connect import Context, auto_provider
from workbench.agent.local import WEAK_MODEL_NOTICE, LocalProvider
from workbench.agent.model_files import builtin_path
from workbench.agent.openai import OpenAIProvider
from workbench.agent.providers import EchoProvider, ScriptedProvider, make_provider
from workbench.config.settings import SETTINGS, Settings, validate
from workbench.errors import ConfigError, ModelError

KEY = "sk-proj-connect-test-91b2c3d4"


class FakeSettings:
    """Settings with their origins: ``global`` for those given, ``default`` for the rest."""

    def __init__(self, values: dict | None = None, origin: str = "global: config.toml") -> None:
        self.values = values or {}
        self._origin = origin

    @property
    def settings(self) -> Settings:
        return Settings.from_values({key: self.values.get(key, setting.default)
                                     for key, setting in SETTINGS.items()})

    def origin(self, key: str) -> str:
        return self._origin if key in self.values else "default"


def make(spec: str, tmp_path, values=None, env=None, origin="global: config.toml"):
    return make_provider(spec, cwd=tmp_path, settings=FakeSettings(values, origin), env=env or {},
                         home_root=tmp_path / "home")


def test_openai_with_the_key_from_the_environment(tmp_path) -> None:
    model = make("openai:gpt-test", tmp_path, env={"OPENAI_API_KEY": KEY})
    assert isinstance(model, OpenAIProvider)
    assert (model.name, model.model, model.base_url) == ("openai:gpt-test", "gpt-test",
                                                         "https://api.openai.com/v1")
    assert KEY not in repr(model) and KEY not in str(vars(model).get("name"))
    assert make("openai", tmp_path, env={"OPENAI_API_KEY": KEY}).model == "gpt-4o-mini"


def test_openai_base_url_from_the_environment_and_the_persons_config(tmp_path) -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}
    assert make("openai:llama3", tmp_path, env=env).base_url == "http://127.0.0.1:11434/v1"
    configured = make("openai:m", tmp_path, {"openai.base_url": "http://10.0.0.5:8000/v1"}, env)
    assert configured.base_url == "http://10.0.0.5:8000/v1"


def test_the_key_variable_can_be_named_in_config(tmp_path) -> None:
    model = make("openai:m", tmp_path, {"openai.api_key_env": "LOCALAI_KEY"}, {"LOCALAI_KEY": KEY})
    assert model._api_key == KEY


def test_a_missing_key_says_which_variable_to_set(tmp_path) -> None:
    with pytest.raises(ModelError, match="needs an API key: set OPENAI_API_KEY"):
        make("openai:m", tmp_path)
    with pytest.raises(ModelError, match="set ANTHROPIC_API_KEY"):
        make("anthropic:m", tmp_path)
    # A variable name that may be a pasted key is not repeated.
    with pytest.raises(ModelError) as info:
        make("openai:m", tmp_path, {"openai.api_key_env": "sk_live_abcdef123"})
    assert "sk_live_abcdef123" not in str(info.value)


def test_a_project_config_cannot_redirect_keys(tmp_path) -> None:
    values = {"openai.base_url": "https://collector.example/v1", "openai.api_key_env": "AWS_SECRET"}
    model = make("openai:m", tmp_path, values, {"OPENAI_API_KEY": KEY, "AWS_SECRET": "aws"},
                 origin="project: /p/.workbench/config.toml (trusted)")
    assert model.base_url == "https://api.openai.com/v1" and model._api_key == KEY
    assert "the project's openai.base_url is ignored" in model.notice


def test_anthropic_spec(tmp_path) -> None:
    model = make("anthropic:claude-x", tmp_path, {"anthropic.max_tokens": 1000},
                 {"ANTHROPIC_API_KEY": KEY})
    assert isinstance(model, AnthropicProvider)
    assert (model.model, model.max_tokens, model.base_url) == ("claude-x", 1000, "https://api.anthropic.com")
    assert KEY not in repr(model)


def test_an_api_key_pasted_as_the_variable_name_is_refused_without_repeating_it() -> None:
    with pytest.raises(ConfigError) as info:
        validate("openai.api_key_env", "sk-proj-abc-123")
    assert "NAME of an environment variable" in str(info.value) and "sk-proj" not in str(info.value)


def test_echo_scripted_and_unknown_specs(tmp_path) -> None:
    (tmp_path / "s.json").write_text(json.dumps([{"text": "hi"}]))
    assert isinstance(make_provider("echo"), EchoProvider) and make_provider("echo").notice is None
    assert isinstance(make_provider("scripted:s.json", cwd=tmp_path), ScriptedProvider)
    for spec in ("gpt-4", "auto:x", "echo:x"):
        with pytest.raises(ModelError, match="unknown model .*known: auto, echo, openai:MODEL"):
            make(spec, tmp_path)


def test_local_needs_the_pulled_model_or_a_gguf_file(tmp_path) -> None:
    with pytest.raises(ModelError, match="run `workbench models pull`"):
        make("local", tmp_path)
    (tmp_path / "not.gguf").write_text("text")
    with pytest.raises(ModelError, match="is not a GGUF model file"):
        make("local:not.gguf", tmp_path)
    (tmp_path / "real.gguf").write_bytes(b"GGUF" + bytes(60))
    model = make("local:real.gguf", tmp_path)
    assert isinstance(model, LocalProvider) and model.name == f"local:{tmp_path / 'real.gguf'}"
    assert model.notice is None and not model.server.running()


# --- auto ---------------------------------------------------------------------

def ctx(tmp_path, env=None, values=None) -> Context:
    return Context(FakeSettings(values), env or {}, tmp_path / "home")


NOWHERE = ((1, "nothing"),)


def test_auto_prefers_an_openai_key_then_an_anthropic_key(tmp_path) -> None:
    both = {"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY}
    first = auto_provider(ctx(tmp_path, both), ports=NOWHERE)
    assert isinstance(first, OpenAIProvider) and "found through OPENAI_API_KEY" in first.notice
    second = auto_provider(ctx(tmp_path, {"ANTHROPIC_API_KEY": KEY}), ports=NOWHERE)
    assert isinstance(second, AnthropicProvider) and KEY not in second.notice
    base = auto_provider(ctx(tmp_path, {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}), ports=NOWHERE)
    assert base.base_url == "http://127.0.0.1:9/v1" and "OPENAI_BASE_URL" in base.notice


async def test_auto_finds_a_server_on_a_local_port(tmp_path, fake_server, unused_port) -> None:
    fake_server.queue(Reply(chunked=False, headers={"Content-Type": "application/json"}, pieces=[
        json.dumps({"object": "list", "data": [{"id": "qwen2.5:0.5b"}, {"id": "other"}]})]))
    ports = ((unused_port, "nobody"), (fake_server.port, "Ollama"))
    found = await asyncio.to_thread(auto_provider, ctx(tmp_path), ports=ports)
    assert isinstance(found, OpenAIProvider)
    assert (found.model, found.base_url) == ("qwen2.5:0.5b", f"http://127.0.0.1:{fake_server.port}/v1")
    assert "(Ollama, found on its usual port)" in found.notice
    assert fake_server.requests[0].path == "/v1/models"
    off = await asyncio.to_thread(auto_provider, ctx(tmp_path, values={"providers.probe_local": False}),
                                  ports=ports)
    assert isinstance(off, EchoProvider) and len(fake_server.requests) == 1


async def test_auto_skips_a_server_without_models(tmp_path, fake_server) -> None:
    fake_server.queue(Reply(chunked=False, pieces=['{"data": []}']))
    found = await asyncio.to_thread(auto_provider, ctx(tmp_path), ports=((fake_server.port, "x"),))
    assert isinstance(found, EchoProvider)


def test_auto_uses_the_pulled_model_else_echo_with_a_notice(tmp_path) -> None:
    nothing = auto_provider(ctx(tmp_path), ports=NOWHERE)
    assert isinstance(nothing, EchoProvider)
    assert "workbench models pull" in nothing.notice and "OPENAI_API_KEY" in nothing.notice
    pulled = builtin_path(tmp_path / "home")
    pulled.parent.mkdir(parents=True)
    pulled.write_bytes(b"GGUF" + bytes(60))
    local = auto_provider(ctx(tmp_path), ports=NOWHERE)
    assert isinstance(local, LocalProvider) and local.name == "local"
    assert local.notice == WEAK_MODEL_NOTICE and "workbench models use PATH.gguf" in local.notice
