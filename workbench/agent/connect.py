"""Build the HTTP and local providers from a spec, the settings and the environment.

- ``openai[:MODEL]``: base URL from ``openai.base_url`` when the person set it, else
  ``OPENAI_BASE_URL``, else OpenAI's; the key from the variable ``openai.api_key_env``
  names (``OPENAI_API_KEY``). A server other than OpenAI's may need no key.
- ``anthropic[:MODEL]``: likewise, with ``ANTHROPIC_API_KEY``.
- ``local[:FILE.gguf]``: the embedded llama.cpp server, with ``local.model`` or the
  built-in model.
- ``auto``: the first that is there, in this order: an OpenAI key (or
  ``OPENAI_BASE_URL``), an Anthropic key, a model server answering on this
  machine's usual port, the pulled built-in model; else ``echo``, with a notice
  saying how to connect a model.

Where a key may be sent (``*.base_url``) and which variable holds it
(``*.api_key_env``) are taken from the person's own config only: a project's
config, even trusted, cannot redirect a key.

Keys are read here and handed to the providers; nothing here prints them.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from workbench.config.settings import DEFAULTS, Settings
from workbench.errors import ModelError

OPENAI_DEFAULT_BASE = DEFAULTS.openai.base_url

LOCAL_PORTS: tuple[tuple[int, str], ...] = (
    (11434, "Ollama"), (8080, "llama.cpp or LocalAI"), (8000, "vLLM"))
"""Where ``auto`` looks for a model server on 127.0.0.1, and who usually listens there."""

_GLOBAL_ONLY = ("openai.base_url", "openai.api_key_env", "anthropic.base_url", "anthropic.api_key_env")


class ConfigSource(Protocol):
    """What is read from the config: ``Config`` fits."""

    @property
    def settings(self) -> Settings: ...

    def origin(self, key: str) -> str: ...


class Context:
    """The settings, the environment and the home a provider is built with."""

    def __init__(self, settings: ConfigSource, env: Mapping[str, str], home_root: Path) -> None:
        self.config = settings
        self.settings: Settings = settings.settings
        """The values that apply; read the global-only ones with ``own``."""
        self.env = env
        self.home_root = home_root
        self.notices: list[str] = []

    def own(self, key: str) -> str:
        """A setting only the person's own config may say (``_GLOBAL_ONLY``): its value,
        or its default when a project set it."""
        assert key in _GLOBAL_ONLY, key
        section, name = key.split(".")
        if str(self.config.origin(key)).startswith("project"):
            self.notices.append(f"the project's {key} is ignored: only your own config can say "
                                f"where model keys go")
            return str(getattr(getattr(DEFAULTS, section), name))
        return str(getattr(getattr(self.settings, section), name))

    def set_by_person(self, key: str) -> bool:
        return str(self.config.origin(key)).startswith("global")

    def key(self, setting: str) -> tuple[str, str | None]:
        """The variable named by ``setting`` and its value (None when unset or empty)."""
        name = self.own(setting)
        return name, (self.env.get(name) or "").strip() or None

    def http(self) -> dict[str, Any]:
        providers = self.settings.providers
        return {"max_retries": providers.max_retries,
                "max_retry_wait_s": providers.max_retry_wait_s,
                "timeout_s": providers.timeout_s}


def _shown_name(name: str, setting: str) -> str:
    """A variable name fit to print (a name that may be a pasted key is not)."""
    return name if re.fullmatch(r"[A-Z][A-Z0-9_]{0,63}", name) else f"the variable {setting} names"


def openai_provider(model: str, ctx: Context, *, notice: str | None = None):
    from workbench.agent.openai import OpenAIProvider

    base = ctx.own("openai.base_url")
    if not ctx.set_by_person("openai.base_url") and ctx.env.get("OPENAI_BASE_URL", "").strip():
        base = ctx.env["OPENAI_BASE_URL"].strip()
    name, key = ctx.key("openai.api_key_env")
    model = model or ctx.settings.openai.model
    if key is None and base.rstrip("/") == OPENAI_DEFAULT_BASE:
        raise ModelError(f"openai:{model} needs an API key: set "
                         f"{_shown_name(name, 'openai.api_key_env')} (or point openai.base_url "
                         f"at a server that needs none)")
    return OpenAIProvider(model, base_url=base, api_key=key, notice=_joined(notice, ctx.notices),
                          **ctx.http())


def anthropic_provider(model: str, ctx: Context, *, notice: str | None = None):
    from workbench.agent.anthropic import AnthropicProvider

    name, key = ctx.key("anthropic.api_key_env")
    base = ctx.own("anthropic.base_url")
    model = model or ctx.settings.anthropic.model
    if key is None and base.rstrip("/") == DEFAULTS.anthropic.base_url:
        raise ModelError(f"anthropic:{model} needs an API key: set "
                         f"{_shown_name(name, 'anthropic.api_key_env')}")
    return AnthropicProvider(model, base_url=base, api_key=key,
                             max_tokens=ctx.settings.anthropic.max_tokens,
                             notice=_joined(notice, ctx.notices), **ctx.http())


def local_model_path(ctx: Context, argument: str = "") -> tuple[Path, bool]:
    """The GGUF file ``local[:FILE]`` runs, and whether it is the built-in model."""
    from workbench.agent.model_files import builtin_path

    chosen = argument or ctx.settings.local.model
    if not chosen:
        return builtin_path(ctx.home_root), True
    path = Path(os.path.abspath(Path(chosen).expanduser()))
    return path, path == builtin_path(ctx.home_root)


def local_provider(argument: str, ctx: Context, *, notice: str | None = None):
    from workbench.agent.local import LocalProvider
    from workbench.agent.model_files import check_gguf

    path, builtin = local_model_path(ctx, argument)
    if builtin and not path.exists():
        raise ModelError("the built-in local model is not here yet: run `workbench models pull` "
                         "(about 98 MB, once)")
    check_gguf(path)
    if importlib.util.find_spec("xllamacpp") is None:
        raise ModelError("the local model needs the xllamacpp package: pip install xllamacpp")
    return LocalProvider(path, builtin=builtin, context_tokens=ctx.settings.local.context_tokens,
                         threads=ctx.settings.local.threads,
                         tool_mode=ctx.settings.local.tool_mode,
                         max_tokens=ctx.settings.local.max_tokens,
                         timeout_s=max(300.0, ctx.settings.providers.timeout_s),
                         log_path=ctx.home_root / "logs" / "llama-server.log",
                         notice=notice)


def probe_local_servers(ports: tuple[tuple[int, str], ...] = LOCAL_PORTS,
                        timeout_s: float = 0.4) -> tuple[str, str, str] | None:
    """The first OpenAI-compatible server on 127.0.0.1 that lists a model.

    Returns:
        ``(base_url, model, who)`` or None. Each port costs a refused connection
        (well under a millisecond) when nothing listens, ``timeout_s`` at most otherwise.
    """
    import httpx

    with httpx.Client(trust_env=False, timeout=httpx.Timeout(timeout_s)) as client:
        for port, who in ports:
            base = f"http://127.0.0.1:{port}/v1"
            try:
                response = client.get(f"{base}/models")
                data = response.json() if response.status_code == 200 else {}
            except (httpx.HTTPError, ValueError):
                continue
            models = data.get("data") if isinstance(data, dict) else None
            ids = [m.get("id") for m in models or [] if isinstance(m, dict) and m.get("id")]
            if ids:
                return base, str(ids[0]), who
    return None


def auto_provider(ctx: Context, *, ports: tuple[tuple[int, str], ...] = LOCAL_PORTS):
    """The first model that is there; see the module docstring."""
    from workbench.agent.model_files import builtin_path
    from workbench.agent.openai import OpenAIProvider
    from workbench.agent.providers import ECHO_HINT, EchoProvider

    name, key = ctx.key("openai.api_key_env")
    if key or ctx.env.get("OPENAI_BASE_URL", "").strip():
        why = _shown_name(name, "openai.api_key_env") if key else "OPENAI_BASE_URL"
        model = ctx.settings.openai.model
        return openai_provider(model, ctx, notice=f"Using openai:{model}, found through {why}.")
    name, key = ctx.key("anthropic.api_key_env")
    if key:
        model = ctx.settings.anthropic.model
        return anthropic_provider(model, ctx, notice=f"Using anthropic:{model}, found through "
                                                     f"{_shown_name(name, 'anthropic.api_key_env')}.")
    if ctx.settings.providers.probe_local:
        found = probe_local_servers(ports)
        if found:
            base, model, who = found
            return OpenAIProvider(model, base_url=base, label=f"openai:{model}",
                                  notice=f"Using {model} from the model server on {base} "
                                         f"({who}, found on its usual port).", **ctx.http())
    path, _ = local_model_path(ctx)
    if path.exists() and importlib.util.find_spec("xllamacpp") is not None:
        return local_provider("", ctx)
    hint = ECHO_HINT
    if path.exists():
        hint += " (The local model needs the xllamacpp package: pip install xllamacpp.)"
    elif path != builtin_path(ctx.home_root):
        hint += f" (local.model names {path}, which was not found.)"
    return EchoProvider(notice=hint)


def _joined(notice: str | None, more: list[str]) -> str | None:
    parts = [part for part in (notice, *more) if part]
    return " ".join(parts) if parts else None
