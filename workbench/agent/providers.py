"""Model providers and the factory that picks one from a ``--model`` spec.

A provider turns a conversation and the tools on offer into a stream of chunks:
text pieces, then any tool calls. Specs look like ``NAME`` or ``NAME:ARGUMENT``:

- ``scripted:PATH`` replays a JSON file (see ``ScriptedProvider``);
- ``echo`` answers offline by repeating the user's message, so a fresh install can
  be tried with no model configured;
- ``openai[:MODEL]`` (any OpenAI-compatible server), ``anthropic[:MODEL]``,
  ``local[:FILE.gguf]`` (llama.cpp in a child process) and ``auto`` (the first of
  them that is there): built by ``connect`` from the settings and the environment;
- ``ext:EXTENSION/NAME`` (or ``NAME`` alone, when no built-in model has it): a model
  provider an extension registers, answered in its sandboxed worker. The core builds
  those (``workbench.agent.extension_model``); this module only reads the spec.

A provider may carry ``notice`` (what the person should know about it, e.g. that
the built-in local model is weak) and ``last_usage`` (tokens of the last reply).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from workbench.agent.messages import ChatMessage, ModelChunk, TextChunk, ToolCall, ToolCallChunk, ToolSpec
from workbench.errors import ModelError, WorkbenchError

if TYPE_CHECKING:
    from workbench.agent.replies import Reply


class ModelProvider(Protocol):
    """What the turn loop needs from a model."""

    name: str

    def stream(self, messages: Sequence[ChatMessage], tools: list[ToolSpec]) -> AsyncIterator[ModelChunk]:
        """Yield the reply to ``messages`` as text chunks followed by tool-call chunks."""
        ...


def _pieces(text: str, size: int = 16) -> list[str]:
    """Split ``text`` into small pieces so that replies stream visibly."""
    return [text[i:i + size] for i in range(0, len(text), size)] or []


ECHO_HINT = ("No model is connected, so replies only echo what you type. Run `workbench models pull` "
             "for a small offline model, set OPENAI_API_KEY or ANTHROPIC_API_KEY, start a local "
             "server (Ollama, llama.cpp, LocalAI, vLLM), or `workbench config set model openai:MODEL`.")
"""What the person is told when the replies are echoes: why, and how to connect a model."""


class EchoProvider:
    """An offline model that repeats the last user message; never calls tools.

    Args:
        notice: Why echo answers, when ``auto`` found no model.
    """

    name = "echo"

    def __init__(self, notice: str | None = None) -> None:
        self.notice = notice

    async def stream(self, messages: Sequence[ChatMessage], tools: list[ToolSpec]) -> AsyncIterator[ModelChunk]:
        last = next((m.content for m in reversed(messages) if m.role == "user"), "")
        for piece in _pieces(f"You said: {last}"):
            yield TextChunk(piece)


class ScriptedProvider:
    """Replays the model's successive messages from a JSON file.

    The file holds a list (or ``{"replies": [...]}``) whose items are the model's
    messages in order: ``{"text": "…"}``, ``{"tool_calls": [{"name": "…",
    "arguments": {…}}]}``, or both. The reply given is chosen by how many assistant
    messages the conversation already has, so a resumed session continues where it
    stopped. When the list runs out, streaming raises ``ModelError``.

    Args:
        path: The JSON file.

    Raises:
        ModelError: The file is missing, not JSON, or not of the shape above; the
            message names the file and the place (line and column, or a JSON pointer).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = f"scripted:{path}"
        self.replies = self._load(path)

    @staticmethod
    def _load(path: Path) -> list[Reply]:
        from workbench.agent.replies import Reply, ValidationError, pointer

        from workbench import jsontext

        try:
            data = jsontext.loads(jsontext.read_file(path), str(path))
        except OSError as exc:
            raise ModelError(f"cannot read the scripted model file: {exc.strerror}", where=str(path)) from exc
        except WorkbenchError as exc:
            raise ModelError(exc.message, where=exc.where) from None
        base: tuple = ()
        if isinstance(data, dict) and "replies" in data:
            data, base = data["replies"], ("replies",)
        if not isinstance(data, list):
            raise ModelError("expected a list of replies (or an object with \"replies\")",
                             where=f"{path}#{pointer(base) or '/'}")
        replies = []
        for index, item in enumerate(data):
            try:
                replies.append(Reply.model_validate(item))
            except ValidationError as exc:
                first = exc.errors()[0]
                where = pointer(base + (index,) + tuple(first["loc"]))
                raise ModelError(first["msg"], where=f"{path}#{where}") from exc
        return replies

    async def stream(self, messages: Sequence[ChatMessage], tools: list[ToolSpec]) -> AsyncIterator[ModelChunk]:
        index = sum(1 for m in messages if m.role == "assistant")
        if index >= len(self.replies):
            raise ModelError(f"the scripted model has no reply left: all {len(self.replies)} "
                             f"were used", where=str(self.path))
        reply = self.replies[index]
        for piece in _pieces(reply.text):
            yield TextChunk(piece)
        for call in reply.tool_calls:
            yield ToolCallChunk(ToolCall(id=call.id or f"call_{uuid.uuid4().hex[:12]}",
                                         name=call.name, arguments=call.arguments))


BUILTIN_MODELS = ("auto", "echo", "openai", "anthropic", "local", "scripted")
"""The names of the built-in model providers: they win a name an extension also uses."""

EXTENSION_PREFIX = "ext:"
"""How a model spec names an extension's model provider: ``ext:EXTENSION/NAME``."""

KNOWN_SPECS = ("auto, echo, openai:MODEL, anthropic:MODEL, local, local:FILE.gguf, "
               "scripted:PATH, ext:EXTENSION/PROVIDER")
"""The spec forms, for error messages."""


def extension_spec(spec: str) -> tuple[str, str] | None:
    """``(extension, provider)`` when ``spec`` is ``ext:EXTENSION/NAME``, else None.

    Raises:
        ModelError: It starts with ``ext:`` but is not of that shape.
    """
    if not spec.startswith(EXTENSION_PREFIX):
        return None
    extension, slash, name = spec[len(EXTENSION_PREFIX):].partition("/")
    if not (extension and slash and name) or "/" in name:
        raise ModelError(f"{spec!r} is not an extension's model: write ext:EXTENSION/PROVIDER, "
                         "e.g. ext:acme/house")
    return extension, name


def check_spec(spec: str, cwd: Path | None = None) -> None:
    """Refuse a spec that names no built-in model in a known form, without building it
    (a key or a server may come later); a ``scripted`` file is read (relative to
    ``cwd``), so a bad one is named now. Extension specs are the core's to check.

    Raises:
        ModelError: What is wrong, and the known forms.
    """
    name, _, argument = spec.partition(":")
    if name == "scripted":
        make_provider(spec, cwd=cwd)
        return
    if name in ("echo", "auto") and argument:
        raise ModelError(f"{name} takes no argument; known: {KNOWN_SPECS}")
    if name not in BUILTIN_MODELS:
        raise ModelError(f"unknown model {spec!r}; known: {KNOWN_SPECS}")


def make_provider(spec: str, *, cwd: Path | None = None, settings: Any = None,
                  env: Mapping[str, str] | None = None, home_root: Path | None = None) -> ModelProvider:
    """Build the provider a model spec names.

    Args:
        spec: ``echo``, ``scripted:PATH``, ``openai[:MODEL]``, ``anthropic[:MODEL]``,
            ``local[:FILE.gguf]`` or ``auto``.
        cwd: The folder relative paths start from.
        settings: The config (``get`` and ``origin`` by key); loaded from the home
            and ``cwd`` when omitted and the spec needs it.
        env: Where API keys are read; ``os.environ`` when omitted.
        home_root: The workbench home; from ``env`` when omitted.

    Raises:
        ModelError: The spec names no known provider, or the one it names cannot be
            used here (no key, no model file); the message says what to do.
    """
    name, _, argument = spec.partition(":")
    if name == "scripted":
        if not argument:
            raise ModelError("scripted needs a file: --model scripted:PATH")
        path = Path(argument).expanduser()
        if not path.is_absolute() and cwd is not None:
            path = cwd / path
        return ScriptedProvider(path)
    if name == "echo" and not argument:
        return EchoProvider()
    if name not in ("openai", "anthropic", "local", "auto") or (name == "auto" and argument):
        raise ModelError(f"unknown model {spec!r}; known: {KNOWN_SPECS}")
    from workbench.agent import connect

    ctx = _context(cwd, settings, env, home_root)
    if name == "openai":
        return connect.openai_provider(argument, ctx)
    if name == "anthropic":
        return connect.anthropic_provider(argument, ctx)
    if name == "local":
        if argument and not Path(argument).expanduser().is_absolute() and cwd is not None:
            argument = str(cwd / Path(argument).expanduser())
        return connect.local_provider(argument, ctx)
    return connect.auto_provider(ctx)


def _context(cwd: Path | None, settings: Any, env: Mapping[str, str] | None,
             home_root: Path | None):
    from workbench.agent.connect import Context
    from workbench.config.files import Config
    from workbench.config.home import Home

    env = os.environ if env is None else env
    home = Home(home_root) if home_root is not None else Home.resolve(env)
    if settings is None:
        settings = Config.load(home, cwd)
    return Context(settings, env, home.root)
