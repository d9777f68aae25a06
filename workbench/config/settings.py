"""The declaration of every setting, the table derived from it, and the checks of values.

Each setting is declared once, as a field of the pydantic models below (``Settings`` and
its sections): its type, its default, its rule (``Rule``) and, as the field's docstring,
its one line of help. ``SETTINGS``, the table ``config list``, ``config set``, the file
reader and the Settings screen work from, is built from those fields, and ``Settings`` is
also the typed, read-only view of the values that apply (``Config.settings``), so code
reads ``settings.tools.timeout_ms`` rather than ``int(config.get("tools.timeout_ms"))``.

A dotted key (``tools.timeout_ms``) is a key inside a TOML table (``[tools]``).
Values are checked here, whether they come from a file or from the command line;
the callers say where the value came from so an error can name it.

This module must not import tomlkit or touch files; it imports only pydantic and
``workbench.errors``.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_origin

from pydantic import BaseModel, ConfigDict

from workbench.errors import ConfigError, ExitCode, UnknownSettingError

_TYPE_NAMES: dict[type, str] = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    list: "a list of strings",
}


@dataclass(frozen=True)
class Setting:
    """One known setting.

    Attributes:
        key: The dotted name, e.g. ``tools.timeout_ms``.
        type: One of ``str``, ``int``, ``float``, ``bool`` or ``list`` (of strings).
        default: The value when no config file sets it.
        help: One line saying what it does.
        check: Extra rule beyond the type: returns a problem, or None when the value is fine.
        secret: Never repeat the value in an error (a key may have been pasted there).
    """

    key: str
    type: type
    default: Any
    check: Callable[[Any], str | None] | None = None
    secret: bool = False

    @property
    def help(self) -> str:
        """Its field's docstring on one line (read from the source when first asked)."""
        return _docstrings().get(self.key, "")

    @property
    def type_name(self) -> str:
        """The type in words, for messages (``an integer``)."""
        return _TYPE_NAMES[self.type]


def _approval_policy(value: str) -> str | None:
    if value in ("deny", "allowlisted"):
        return None
    if value.startswith("delegate:") and value[len("delegate:"):].strip():
        return None
    return "must be 'deny', 'allowlisted' or 'delegate:COMMAND'"


def _http_url(value: str) -> str | None:
    scheme, sep, rest = value.partition("://")
    if sep and scheme in ("http", "https") and rest.strip("/"):
        return None
    return "must be an http:// or https:// URL"


def _env_name(value: str) -> str | None:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
        return None
    return "must be the NAME of an environment variable (e.g. OPENAI_API_KEY), not a key"


def _one_of(*choices: str) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        return None if value in choices else "must be " + " or ".join(repr(c) for c in choices)
    return check


def _between(low: int | float, high: int | float, *, above: bool = False,
             unit: str = "") -> Callable[[int | float], str | None]:
    """A number in ``[low, high]`` (``(low, high]`` when ``above``): the upper bound is what
    the system can hold (an rlimit, a timer) and a person could mean, so a slip such as
    ``1e23`` is refused when set rather than failing every use."""
    def words(number: int | float) -> str:
        return f"{number:_}".replace("_", ",") + (f" {unit}" if unit else "")

    def check(value: int | float) -> str | None:
        if (value <= low) if above else (value < low):
            if above:
                return "must be greater than zero" if low == 0 else f"must be greater than {words(low)}"
            return f"must be at least {words(low)}"
        if value > high:
            return f"must be at most {words(high)}"
        return None
    return check


DAY_S = 86_400
"""Seconds in a day: the longest any one wait in workbench may be set to."""


def _non_empty(value: str) -> str | None:
    return "must not be empty" if not value.strip() else None


def _locale_name(value: str) -> str | None:
    from workbench.config.locale import to_tag

    return None if not value.strip() or to_tag(value) else "must be a locale such as en-US or de_DE.UTF-8"


def _no_empty_items(value: list[str]) -> str | None:
    return "must not contain empty names" if any(not item.strip() for item in value) else None


class Rule:
    """A check beyond the type, attached to a field: ``Annotated[int, Rule(_between(0, 10))]``."""

    def __init__(self, check: Callable[[Any], str | None]) -> None:
        self.check = check


class Secret:
    """Marks a field whose value is never repeated in an error (a key may be pasted there)."""


_SECRET = Secret()


def _positive(high: int | float, unit: str = "") -> Rule:
    return Rule(_between(0, high, above=True, unit=unit))


class _Section(BaseModel):
    """A group of settings: a TOML table, read-only once built."""

    # No ``use_attribute_docstrings``: pydantic would read and parse this module's source
    # once per section at every start; the help is read from it once, when first shown
    # (``_docstrings``). ``defer_build``: a section's validator is built when something
    # is first validated by it, never at import; the view of the values in force is
    # built from values checked already (``Settings.from_values``), without one.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class ToolsSettings(_Section):
    """``[tools]``: tool calls."""

    timeout_ms: Annotated[int, _positive(DAY_S * 1000, "ms")] = 300_000
    """How long one tool call may run, in milliseconds."""

    max_output_bytes: Annotated[int, _positive(1 << 30, "bytes")] = 1_048_576
    """The largest tool result kept, in bytes."""

    schema_token_budget: Annotated[int, _positive(10_000_000)] = 6000
    """Estimated tokens the tools offered to the model may take; past it, the model
    gets the tools relevant to the message and finds the rest with tool_search."""

    review_writes: Annotated[str, Rule(_one_of("auto", "always", "never"))] = "auto"
    """Whether a file tool's change (edit_file, write_file) is shown as a diff to accept
    before it is written: always, never, or auto (outside an interactive TUI chat only:
    headless runs, schedules, agents, where the approvals policy or answers file decides)."""


class ExtensionsSettings(_Section):
    """``[extensions]``: loading and installing extensions."""

    enabled: bool = True
    """Load extensions; when off, extension diagnostics still run."""

    samples: bool = False
    """Load the samples extension (one small tool per ctx capability), for development."""

    registry: Annotated[str, Rule(_http_url)] = "https://registry.npmjs.org"
    """The npm registry extensions are searched for and installed from."""


class HeadlessSettings(_Section):
    """``[headless]``: how runs without a person answer permission requests."""

    approvals: Annotated[str, Rule(_approval_policy)] = "deny"
    """How headless runs answer permission requests: deny, allowlisted or delegate:COMMAND."""

    allowlist: Annotated[tuple[str, ...], Rule(_no_empty_items)] = ()
    """Tools a headless run may use without asking, when approvals is allowlisted."""

    delegate_timeout_s: Annotated[float, _positive(DAY_S, "s")] = 30.0
    """How long a delegate command may take to answer, in seconds."""

    max_prompt_bytes: Annotated[int, _positive(1 << 30, "bytes")] = 1_048_576
    """The most `workbench run` reads as its prompt from stdin, and from each --file."""


class SandboxSettings(_Section):
    """``[sandbox]``: the tool workers' limits."""

    memory_mb: Annotated[int, _positive(1 << 20, "MiB")] = 1024
    """The memory one tool worker may use, in MiB."""

    per_process_memory: bool = False
    """Let tools granted `run` start processes where this machine cannot make a memory
    cgroup per worker (see `workbench doctor`): each process is then bounded alone,
    so N processes may hold N times sandbox.memory_mb. Off: such calls are refused."""

    keep_warm: bool = True
    """Start a tool's next workers ahead of its calls (each still serves one call)."""

    pool_size: Annotated[int, Rule(_between(0, 32))] = 4
    """Workers one tool keeps started ahead, at most, as its recent use asks (0: none)."""

    pool_total: Annotated[int, Rule(_between(0, 256))] = 8
    """Workers all tools keep started ahead together, at most."""

    pool_memory_mb: Annotated[int, Rule(_between(0, 1 << 20, unit="MiB"))] = 512
    """Resident memory all workers started ahead hold together, at most, in MiB."""

    pool_idle_s: Annotated[float, _positive(DAY_S, "s")] = 60.0
    """Drop a tool's workers started ahead after this many seconds without a call of it."""

    unsandboxed_tools: Annotated[tuple[str, ...], Rule(_no_empty_items)] = ()
    """Tools you allow to run WITHOUT the sandbox where this machine cannot provide
    one (EXTENSION.TOOL); empty means such tools are refused."""

    idle_stop_s: Annotated[float, _positive(365 * DAY_S, "s")] = 300.0
    """Stop a host's warm tool workers after this many seconds without a tool call."""


NETWORK_LEVELS = ("off", "registries", "all")
"""The shell's network, narrowest first: none, the package registries, every public site."""


class ShellSettings(_Section):
    """``[shell]``: the ``shell`` tool, which runs a command line in the sandbox on a
    copy-on-write view of the chat's project folder."""

    enabled: bool = True
    """Offer the shell tool (it runs only where the sandbox can isolate it: see
    `workbench doctor`)."""

    timeout_s: Annotated[int, Rule(_between(1, 1680, unit="s"))] = 120
    """Seconds a command may run when the call names no time limit (at most 28 minutes)."""

    max_timeout_s: Annotated[int, Rule(_between(1, 1680, unit="s"))] = 1680
    """The longest time limit a call may ask for, in seconds (at most 28 minutes)."""

    answer_bytes: Annotated[int, Rule(_between(1024, 1 << 20, unit="bytes"))] = 65536
    """Bytes of output (stdout and stderr together) an answer carries; beyond, its head
    and tail are kept and the answer says how much was left out."""

    upper_mb: Annotated[int, Rule(_between(1, 1 << 16, unit="MiB"))] = 512
    """What one command may write in the project, in MiB (held in memory until it is
    applied: the host's disk is never filled through it)."""

    tmp_mb: Annotated[int, Rule(_between(1, 1 << 16, unit="MiB"))] = 256
    """The size of a command's private /tmp, in MiB."""

    undo_mb: Annotated[int, Rule(_between(0, 1 << 16, unit="MiB"))] = 64
    """Bytes of earlier file contents one change set keeps for undo, in MiB; a file
    beyond it is applied but its change cannot be undone (the change set says so)."""

    undo_total_mb: Annotated[int, Rule(_between(0, 1 << 20, unit="MiB"))] = 512
    """Earlier contents all change sets keep together, in MiB; past it the oldest
    change sets lose theirs (they are listed as not undoable)."""

    programs: Annotated[tuple[str, ...], Rule(_no_empty_items)] = (
        "/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
    """Folders of the host's installation whose programs a command runs, read-only
    (from your own config only: a project's cannot add to them)."""

    network: Annotated[str, Rule(_one_of(*NETWORK_LEVELS))] = "off"
    """What a command may reach through the proxy: off, registries (PyPI, npm, Debian)
    or all (every public site); never more than shell.network_ceiling."""

    network_ceiling: Annotated[str, Rule(_one_of(*NETWORK_LEVELS))] = "off"
    """The most any chat's shell may reach (from your own config only: a project's
    cannot raise it). A host beyond the chat's network but within this is asked about."""


class ScheduleSettings(_Section):
    """``[schedule]``: scheduled runs."""

    daily_limit: Annotated[int, _positive(1_000_000)] = 50
    """Scheduled runs that may start in any 24 hours (per home); past it runs are
    refused and recorded as refused."""

    run_timeout_s: Annotated[float, _positive(7 * DAY_S, "s")] = 900.0
    """How long one scheduled run may take before it is killed with every process it
    started (recorded as timed out)."""

    missed_after_s: Annotated[float, _positive(365 * DAY_S, "s")] = 60.0
    """How late a schedule's window may be seen and still run on time; older windows
    were missed (they run once later only with runMissed)."""

    max_parallel: Annotated[int, _positive(1000)] = 4
    """Scheduled runs that may go on at once (one per schedule)."""

    on_need: Annotated[str, Rule(_one_of("fail", "pause"))] = "fail"
    """What a scheduled run does when it needs something its run card lacks (a
    permission, an answer): fail, or pause until approved."""


class HooksSettings(_Section):
    """``[hooks]``: hook handlers."""

    budget_ms: Annotated[int, _positive(DAY_S * 1000, "ms")] = 2000
    """How long one hook handler may run before its worker is killed."""


class MemoriesSettings(_Section):
    """``[memories]``: knowledge and skills handed to the model."""

    context_budget_chars: Annotated[int, Rule(_between(1000, 100_000_000))] = 12000
    """Characters of knowledge and skill listings handed to the model each turn;
    the rest stay findable with memory_search."""


class SpeechSettings(_Section):
    """``[speech]``: speech for tools."""

    tts: bool = False
    """Text-to-Speech for tools (needs espeak-ng)."""

    stt: bool = False
    """Speech-to-Text for tools (needs pocketsphinx)."""


class McpSettings(_Section):
    """``[mcp]``: MCP servers (their entries live in ``[mcp.servers.NAME]``)."""

    startup_timeout_ms: Annotated[int, _positive(DAY_S * 1000, "ms")] = 30_000
    """How long an MCP server may take to start and list its tools, in milliseconds."""

    disabled: Annotated[tuple[str, ...], Rule(_no_empty_items)] = ()
    """MCP servers switched off everywhere, by name (`workbench mcp disable NAME`)."""


class OpenAISettings(_Section):
    """``[openai]``: an OpenAI-compatible model server."""

    base_url: Annotated[str, Rule(_http_url)] = "https://api.openai.com/v1"
    """The OpenAI-compatible API root, with /v1 (else OPENAI_BASE_URL); only your own
    config can change it."""

    api_key_env: Annotated[str, Rule(_env_name), _SECRET] = "OPENAI_API_KEY"
    """The environment variable that holds the OpenAI-compatible API key (its name,
    not the key)."""

    model: Annotated[str, Rule(_non_empty)] = "gpt-4o-mini"
    """The model 'openai' and auto use."""


class AnthropicSettings(_Section):
    """``[anthropic]``: the Anthropic API."""

    base_url: Annotated[str, Rule(_http_url)] = "https://api.anthropic.com"
    """The Anthropic API root; only your own config can change it."""

    api_key_env: Annotated[str, Rule(_env_name), _SECRET] = "ANTHROPIC_API_KEY"
    """The environment variable that holds the Anthropic API key (its name, not the key)."""

    model: Annotated[str, Rule(_non_empty)] = "claude-sonnet-4-5"
    """The model 'anthropic' and auto use."""

    max_tokens: Annotated[int, _positive(10_000_000)] = 4096
    """The most tokens one Anthropic reply may use."""


class LocalSettings(_Section):
    """``[local]``: the model run on this machine with llama.cpp."""

    model: str = ""
    """The GGUF file 'local' runs; empty: the built-in model `workbench models pull` fetches."""

    context_tokens: Annotated[int, _positive(10_000_000)] = 4096
    """The local model's context size, in tokens."""

    max_tokens: Annotated[int, _positive(10_000_000)] = 512
    """The most tokens one local reply may use."""

    threads: Annotated[int, Rule(_between(0, 4096))] = 0
    """CPU threads for the local model; 0 lets llama.cpp choose."""

    tool_mode: Annotated[Literal["grammar", "native"], Rule(_one_of("grammar", "native"))] = "grammar"
    """How the local model calls tools: grammar (JSON-schema constrained) or native."""


class ProvidersSettings(_Section):
    """``[providers]``: talking to model servers."""

    max_retries: Annotated[int, Rule(_between(0, 100))] = 3
    """How often a rate-limited (429) or overloaded model request is retried."""

    max_retry_wait_s: Annotated[float, Rule(_between(0, DAY_S, unit="s"))] = 60.0
    """The longest total wait across those retries, in seconds."""

    timeout_s: Annotated[float, _positive(DAY_S, "s")] = 120.0
    """How long to wait for a model server to say anything, in seconds."""

    probe_local: bool = True
    """Let auto look for a model server on this machine's usual ports
    (Ollama 11434, llama.cpp/LocalAI 8080, vLLM 8000)."""


class TuiSettings(_Section):
    """``[tui]``: the terminal interface."""

    # Asking a terminal what it draws costs a wait when it does not answer, so auto
    # asks only a terminal whose environment names one that draws images; the other
    # two values are for a terminal that says the wrong thing (or nothing).
    images: Annotated[str, Rule(_one_of("auto", "graphics", "halfblock"))] = "auto"
    """How the TUI draws images: auto (terminal graphics where the terminal says
    it draws them, else half blocks), graphics (always) or halfblock (never)."""


class Settings(_Section):
    """Every known setting: the one declaration of each one's key, type, default, rule and
    help, and the typed, read-only view of the values that apply (``Config.settings``).

    A field of a section is the dotted key ``section.field`` (``tools.timeout_ms``); its
    docstring is the help ``config list`` and the Settings screen show.
    """

    model: Annotated[str, Rule(_non_empty)] = "auto"
    """The default model, for every chat that has none of its own (/model gives one):
    auto (find one), openai:MODEL, anthropic:MODEL, local, local:FILE.gguf, echo,
    scripted:FILE, or an extension's model provider as ext:EXTENSION/NAME."""

    theme: Annotated[str, Rule(_non_empty)] = "workbench-dark"
    """The TUI theme."""

    locale: Annotated[str, Rule(_locale_name)] = ""
    """The locale tools are told (getChatContext().locale), e.g. en-US; empty takes
    it from LC_ALL, LC_MESSAGES or LANG."""

    tools: ToolsSettings = ToolsSettings.model_construct()
    extensions: ExtensionsSettings = ExtensionsSettings.model_construct()
    headless: HeadlessSettings = HeadlessSettings.model_construct()
    sandbox: SandboxSettings = SandboxSettings.model_construct()
    shell: ShellSettings = ShellSettings.model_construct()
    schedule: ScheduleSettings = ScheduleSettings.model_construct()
    hooks: HooksSettings = HooksSettings.model_construct()
    memories: MemoriesSettings = MemoriesSettings.model_construct()
    speech: SpeechSettings = SpeechSettings.model_construct()
    mcp: McpSettings = McpSettings.model_construct()
    openai: OpenAISettings = OpenAISettings.model_construct()
    anthropic: AnthropicSettings = AnthropicSettings.model_construct()
    local: LocalSettings = LocalSettings.model_construct()
    providers: ProvidersSettings = ProvidersSettings.model_construct()
    tui: TuiSettings = TuiSettings.model_construct()

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Settings:
        """The view of values by dotted key (``Config.as_dict()``), each one checked
        already against its setting (``validate``: every value a config file gives is,
        as it is read or set); a list is held as a tuple. Built without validating the
        values again (which would build every section's validator at each start).

        Raises:
            UnknownSettingError: A key that is not a known setting.
        """
        nested: dict[str, Any] = {}
        for key, value in values.items():
            if lookup(key).type is list:
                value = tuple(value)
            section, dot, name = key.rpartition(".")
            (nested.setdefault(section, {}) if dot else nested)[name] = value
        return _constructed(cls, nested)


def _constructed(model: Any, values: Mapping[str, Any]) -> Any:
    """``model`` (a section's class) holding ``values`` (a section's by its name), the
    others at their default."""
    fields = model.model_fields
    return model.model_construct(**{
        name: _constructed(fields[name].annotation, value) if isinstance(value, dict) else value
        for name, value in values.items()})


DEFAULTS = Settings.model_construct()
"""Every setting at its default: where code with no ``Config`` at hand (a parameter's
default, a fallback) takes a setting's default from, rather than writing it again."""

_PLAIN_TYPES: dict[Any, type] = {str: str, int: int, float: float, bool: bool,
                                  tuple[str, ...]: list}


def _declared(model: type[BaseModel], prefix: str = "") -> Iterator[Setting]:
    """The table rows of a model's fields, sections walked in place, in declaration order."""
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, _Section):
            yield from _declared(annotation, f"{name}.")
            continue
        kind = str if get_origin(annotation) is Literal else _PLAIN_TYPES[annotation]
        rules = [item.check for item in field.metadata if isinstance(item, Rule)]
        default = list(field.default) if kind is list else field.default
        yield Setting(prefix + name, kind, default, rules[0] if rules else None,
                      secret=any(isinstance(item, Secret) for item in field.metadata))


def field_docstrings(model: type[BaseModel]) -> dict[str, str]:
    """The docstring written under each field of ``model`` (a class of this module),
    as it stands in the source, by field name; fields without one are left out."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(sys.modules[__name__]))
    node = next(node for node in tree.body
                if isinstance(node, ast.ClassDef) and node.name == model.__name__)
    found: dict[str, str] = {}
    for statement, after in zip(node.body, node.body[1:]):
        if (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)):
            found[statement.target.id] = inspect.cleandoc(after.value.value)
    return found


@functools.cache
def _docstrings() -> dict[str, str]:
    """Each setting's help, by dotted key: its field's docstring on one line."""
    helps: dict[str, str] = {}

    def walk(model: type[BaseModel], prefix: str) -> None:
        docs = field_docstrings(model)
        for name, field in model.model_fields.items():
            if isinstance(field.annotation, type) and issubclass(field.annotation, _Section):
                walk(field.annotation, f"{prefix}{name}.")
            elif name in docs:
                helps[prefix + name] = " ".join(docs[name].split())

    walk(Settings, "")
    return helps


SETTINGS: dict[str, Setting] = {setting.key: setting for setting in _declared(Settings)}
"""Every known setting by its dotted key, in the order ``config list`` shows them."""

TABLES: frozenset[str] = frozenset(
    key.rsplit(".", 1)[0] for key in SETTINGS if "." in key
)
"""The TOML tables that hold settings (``tools``, ``extensions``, ``headless``)."""

FREE_TABLES: frozenset[str] = frozenset({"mcp.servers", "plugins"})
"""Tables that hold entries rather than settings (``[mcp.servers.NAME]``): the config
reader passes over them and their own reader (``workbench.mcp.config``) checks them."""


def lookup(key: str) -> Setting:
    """The setting named ``key``.

    Args:
        key: A dotted setting name.

    Returns:
        The setting.

    Raises:
        UnknownSettingError: When no setting has that name (exit code 2).
    """
    try:
        return SETTINGS[key]
    except KeyError:
        raise UnknownSettingError(unknown_key_message(key)) from None


def unknown_key_message(key: str) -> str:
    """A message for an unknown key, suggesting the closest known one."""
    close = difflib.get_close_matches(key, list(SETTINGS), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else "; run `workbench config list` to see them"
    return f"unknown setting {key!r}{hint}"


def describe(value: Any) -> str:
    """Say what a value is, in TOML's words, for error messages."""
    if isinstance(value, bool):
        kind = "boolean"
    elif isinstance(value, int):
        kind = "integer"
    elif isinstance(value, float):
        kind = "float"
    elif isinstance(value, str):
        kind = "string"
    elif isinstance(value, list):
        kind = "array"
    elif isinstance(value, dict):
        return "a table"
    else:
        kind = type(value).__name__
    shown = repr(value)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{kind} {shown}"


def validate(key: str, value: Any, *, where: str | None = None) -> Any:
    """Check a value against its setting and return it in the setting's type.

    Integers are accepted where a number (float) is expected; nothing else is converted.

    Args:
        key: A known setting name.
        value: The value, as read from TOML or given by code.
        where: The file (and line) the value came from, for the error.

    Returns:
        The value, normalized (a float for number settings, a fresh list for lists).

    Raises:
        UnknownSettingError: When ``key`` is not a known setting.
        ConfigError: When the value has the wrong type or breaks the setting's rule.
    """
    setting = lookup(key)
    shown = "a value not repeated here" if setting.secret else describe(value)
    normalized = _coerce(setting, value)
    if normalized is None:
        raise ConfigError(f"setting {key!r} must be {setting.type_name}, not {shown}", where=where)
    if setting.check is not None:
        problem = setting.check(normalized)
        if problem:
            raise ConfigError(f"setting {key!r} {problem} (got {shown})", where=where)
    return normalized


def _coerce(setting: Setting, value: Any) -> Any:
    """The value in the setting's type, or None when it has the wrong type."""
    if setting.type is bool:
        return value if isinstance(value, bool) else None
    if setting.type is int:
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if setting.type is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return float(value) if math.isfinite(value) else None
    if setting.type is str:
        return value if isinstance(value, str) else None
    if setting.type is list:
        if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
            return list(value)
        return None
    raise TypeError(f"setting {setting.key!r} has an unsupported type {setting.type!r}")


_TRUE_WORDS = frozenset({"true", "yes", "on", "1"})
_FALSE_WORDS = frozenset({"false", "no", "off", "0"})


def parse_value(key: str, text: str) -> Any:
    """Read a value typed on the command line, by the setting's type.

    Booleans accept true/false, yes/no, on/off and 1/0. Lists accept a JSON array
    (``["a", "b"]``) or comma-separated names (``a, b``); an empty string is an
    empty list.

    Args:
        key: A known setting name.
        text: The value as typed.

    Returns:
        The checked value in the setting's type.

    Raises:
        UnknownSettingError: When ``key`` is not a known setting.
        ConfigError: When the text is not a valid value (exit code 2).
    """
    setting = lookup(key)
    raw = text.strip()
    value: Any
    try:
        if setting.type is bool:
            word = raw.lower()
            if word in _TRUE_WORDS:
                value = True
            elif word in _FALSE_WORDS:
                value = False
            else:
                raise ValueError("expected true/false, yes/no, on/off or 1/0")
        elif setting.type is int:
            value = int(raw.replace("_", ""))
        elif setting.type is float:
            value = float(raw.replace("_", ""))
        elif setting.type is list:
            value = _parse_list(raw)
        else:
            value = text
    except ValueError as exc:
        raise ConfigError(f"{text!r} is not {setting.type_name} for {key!r}: {exc}",
                          exit_code=ExitCode.USAGE) from None
    try:
        return validate(key, value)
    except ConfigError as exc:
        raise ConfigError(exc.message, exit_code=ExitCode.USAGE) from None


def _parse_list(raw: str) -> list[str]:
    if raw.startswith("["):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(f"invalid JSON array ({exc.msg})") from None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ValueError("the JSON array must hold only strings")
        return value
    return [item.strip() for item in raw.split(",") if item.strip()]


def format_value(value: Any) -> str:
    """Show a value the way it would be typed: ``true``, ``30.0``, ``["a", "b"]``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return json.dumps(value)
    return str(value)
