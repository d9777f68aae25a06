"""The pydantic models of `loca.json`, the manifest at the root of every extension.

The models are the source of truth for the format: the published JSON Schema
(`loca.schema.json`) is generated from them. Python names are snake_case; every
camelCase key of the file is an alias, and both spellings are accepted. Unknown keys
are refused at the top level and ignored below it (the validator warns about them).
Values are checked strictly, as JSON has them: `"5"` is not an integer.

This module imports nothing of workbench but `ctx_spec` (the permission kinds),
`errors` and `manifest.paths`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (AfterValidator, BaseModel, BeforeValidator, ConfigDict, Discriminator, Field,
                      StringConstraints, Tag, create_model, model_validator)

from workbench import ctx_spec
from workbench.errors import ManifestError
from workbench.manifest.paths import (
    ENTRY_PATH_PATTERN,
    PERMISSION_PATH_PATTERN,
    RELATIVE_PATH_PATTERN,
    RUNTIME_BY_SUFFIX,
    Entry,
    Runtime,
    check_permission_path,
    check_relative_path,
    entry_candidates,
    find_entry,
    runtime_for,
)

EXTENSION_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
"""What an extension's name must match: it becomes its folder's name (no `/`, `..`,
right-to-left or zero-width characters, at most 128 characters)."""
TOOL_NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"
"""What a tool name must match; snake_case is recommended on top of it."""

EXPORT_NAME_PATTERN = r"^[A-Za-z_$][A-Za-z0-9_$]*$"
HookEvent = Literal["on_tool_call", "on_tool_result", "on_session_start", "on_session_shutdown",
                    "on_agent_start", "on_agent_end", "on_turn_start", "on_turn_end",
                    "on_message_start", "on_message_end", "on_tool_execution_start",
                    "on_tool_execution_end"]
"""The events an extension's hooks can subscribe to."""
"""What a tool's `function` must match: an identifier exported by the entry module."""

MAX_TIMEOUT_MS = 86_400_000
"""The longest a manifest may let one call run: a day (as the `tools.timeout_ms` setting)."""

Platform = Literal["darwin", "windows", "linux", "linux_x11", "linux_wayland"]
"""A system a tool can be limited to; `linux` matches any Linux session."""

NonEmptyStr = Annotated[str, StringConstraints(min_length=1, pattern=r"\S")]
Port = Annotated[int, Field(ge=1, le=65535)]
Ports = Annotated[
    Annotated[list[Port], Field(min_length=1), Tag("list")] | Annotated[Literal["*"], Tag("any")],
    Discriminator(lambda value: "any" if isinstance(value, str) else "list"),
]
"""A `net` entry's ports: a list of port numbers, or `"*"` for any port."""
ENV_KEY_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
"""What an `env` permission's key must match: an environment variable's name."""
RelativePath = Annotated[
    str,
    AfterValidator(check_relative_path),
    Field(json_schema_extra={"pattern": RELATIVE_PATH_PATTERN}),
]
PermissionPath = Annotated[
    str,
    AfterValidator(check_permission_path),
    Field(json_schema_extra={"pattern": PERMISSION_PATH_PATTERN}),
]



def _check_entry_suffix(value: str) -> str:
    """Refuse an entry module whose suffix names no runtime."""
    if runtime_for(value) is None:
        raise ValueError(f"{value!r} must end in one of {', '.join(RUNTIME_BY_SUFFIX)}")
    return value


EntryPath = Annotated[
    str,
    AfterValidator(check_relative_path),
    AfterValidator(_check_entry_suffix),
    Field(json_schema_extra={"pattern": ENTRY_PATH_PATTERN}),
]

_NESTED = ConfigDict(strict=True, extra="ignore", populate_by_name=True,
                     frozen=True)


class PermissionEntry(BaseModel):
    """What every permission entry carries: why it is needed, and whether it may be refused."""

    model_config = _NESTED

    reason: NonEmptyStr
    """The sentence the person reads when deciding whether to grant the access."""
    optional: bool = False
    """True when the tool can work without this access."""


class NetPermission(PermissionEntry):
    """Reach a network host on some ports."""

    host: NonEmptyStr
    """The host name, or `"*"` for any host."""
    ports: Ports
    """The ports the tool may connect to, or `"*"` for any port."""


class PathPermission(PermissionEntry):
    """Read or write a file or folder."""

    path: PermissionPath
    """An absolute path, or one starting with $home, $downloads, $models, $sessions,
    $extension, $data (the extension's own data folder) and $project (the chat's folder),
    both Workbench additions, or $env.VAR,
    optionally followed by /subpath."""


class RunPermission(PermissionEntry):
    """Run an executable."""

    binary: NonEmptyStr
    """The executable's name or absolute path."""


class EnvPermission(PermissionEntry):
    """Read an environment variable."""

    key: str = Field(pattern=ENV_KEY_PATTERN)
    """The variable's name: letters, digits and '_', not starting with a digit."""


class FfiPermission(PermissionEntry):
    """Load a native library."""


class SysPermission(PermissionEntry):
    """Reach a system API."""

    flag: NonEmptyStr
    """The system API, as Deno names it (`hostname`, `osRelease`, …)."""


class MemoriesPermission(PermissionEntry):
    """Read, or read and write, the person's memories through `ctx.memories`."""

    access: Literal["read", "write"]
    """`read` covers list, get and getFile; `write` covers reads as well."""


class CapabilityPermission(PermissionEntry):
    """Use an all-or-nothing capability the host brokers (`llm`, `tts`, `stt`)."""


_OS_ENTRY_MODELS: dict[str, type[PermissionEntry]] = {
    "net": NetPermission, "read": PathPermission, "write": PathPermission,
    "run": RunPermission, "env": EnvPermission, "ffi": FfiPermission, "sys": SysPermission,
}
_WORDED_ENTRY_MODELS: dict[str, type[PermissionEntry]] = {"memories": MemoriesPermission}
"""Capability entry models written out for the words of the published schema; any
other capability kind's is built from its spec."""
_built_entry_models: dict[tuple[str, str, tuple[str, ...]], type[PermissionEntry]] = {}


def permission_entry_model(kind: str) -> type[PermissionEntry] | None:
    """The entry model of a permission kind (``ctx_spec``), or None for no kind: an
    all-or-nothing capability's is ``CapabilityPermission``, one with access levels
    has its level field."""
    if kind in _OS_ENTRY_MODELS:
        return _OS_ENTRY_MODELS[kind]
    spec = ctx_spec.permission(kind)
    if spec is None:
        return None
    if kind in _WORDED_ENTRY_MODELS:
        return _WORDED_ENTRY_MODELS[kind]
    if not spec.access or spec.field is None:
        return CapabilityPermission
    key = (kind, spec.field, spec.access)
    if key not in _built_entry_models:
        level = Literal.__getitem__(spec.access)
        _built_entry_models[key] = create_model(
            f"{kind.title()}Permission", __base__=PermissionEntry, __doc__=spec.label,
            **{spec.field: (level, ...)})
    return _built_entry_models[key]


def _as_list(value: Any) -> Any:
    """Accept a capability permission as one object or as a list of them (as the OS
    kinds are): ``memories`` may list a read entry and a write entry, each with its reason."""
    return [value] if isinstance(value, dict) else value


def _capability_field(spec: ctx_spec.PermissionKind) -> tuple[Any, Any]:
    entry = permission_entry_model(spec.kind)
    return (Annotated[list[entry], BeforeValidator(_as_list)],  # type: ignore[valid-type]
            Field(default=[], description=spec.description or None))


def _capability_schema(schema: dict[str, Any]) -> None:
    """Publish the capability permissions as an object or a list of them."""
    for key in ctx_spec.capability_kinds():
        prop = schema["properties"].get(key)
        if prop is None or "items" not in prop:
            continue
        items = prop.pop("items")
        prop.pop("type", None)
        prop.pop("default", None)
        prop["anyOf"] = [items, {"type": "array", "items": items}]


class Permissions(BaseModel):
    """What one tool may reach. A tool starts with nothing; each entry is granted by the person.

    The OS family (net, read, write, run, env, ffi, sys) is enforced by the sandbox; the
    capability family (memories, llm, tts, stt) is brokered by the host.
    """

    model_config = ConfigDict(strict=True, extra="ignore", populate_by_name=True,
                              frozen=True,
                              json_schema_extra=_capability_schema)

    net: list[NetPermission] = []
    """Network hosts and ports."""
    read: list[PathPermission] = []
    """Files or folders to read."""
    write: list[PathPermission] = []
    """Files or folders to write."""
    run: list[RunPermission] = []
    """Executables to run."""
    env: list[EnvPermission] = []
    """Environment variables to read."""
    ffi: list[FfiPermission] = []
    """Native libraries to load."""
    sys: list[SysPermission] = []
    """System APIs to reach."""
    # The capability family is ctx_spec's: a field per kind, one entry or a list.
    for _spec in ctx_spec.capability_permissions():
        __annotations__[_spec.kind], vars()[_spec.kind] = _capability_field(_spec)
    del _spec

    @model_validator(mode="wrap")
    @classmethod
    def _registered_since(cls, data: Any, handler: Any) -> Any:
        """A capability registered after this model was built (``ctx_spec.register``)
        is validated by a model with a field for it as well."""
        if isinstance(data, dict):
            since = tuple(kind for kind in ctx_spec.capability_kinds()
                          if kind in data and kind not in cls.model_fields)
            if since:
                return _permissions_with(cls, since).model_validate(data)
        return handler(data)

    def is_empty(self) -> bool:
        """Return True when the tool asks for no access at all."""
        return not any(getattr(self, name) for name in type(self).model_fields)


_extended: dict[tuple[type, str], type[Permissions]] = {}


def _permissions_with(base: type[Permissions], kinds: tuple[str, ...]) -> type[Permissions]:
    """``base`` with a field for each of ``kinds`` too (built once per set of specs)."""
    key = (base, repr([ctx_spec.permission(kind) for kind in kinds]))
    if key not in _extended:
        fields = {}
        for kind in kinds:
            spec = ctx_spec.permission(kind)
            assert spec is not None
            fields[kind] = _capability_field(spec)
        _extended[key] = create_model(base.__name__, __base__=base, __doc__=base.__doc__,
                                      **fields)
    return _extended[key]


class Tool(BaseModel):
    """One thing the agent can do, run by an exported function of the entry module."""

    model_config = _NESTED

    name: str = Field(pattern=TOOL_NAME_PATTERN)
    """A snake_case id, unique in the extension; it travels on the wire, so keep it stable."""
    description: NonEmptyStr
    """What the tool does, then a short "Use when…" cue."""
    parameters: dict[str, Any]
    """A JSON Schema (draft 2020-12 unless its $schema says otherwise) for the arguments."""
    function: str = Field(pattern=EXPORT_NAME_PATTERN)
    """The name of the entry module's export that runs the tool, called as fn(args, ctx)."""
    triggers: list[str] = []
    """Example phrases a person would say, used to rank the tool in."""
    always_available: bool = Field(False, alias="alwaysAvailable")
    """Skip relevance ranking and offer this tool every turn."""
    platforms: list[Platform] = []
    """The systems the tool runs on; empty means all."""
    permissions: Permissions = Field(default_factory=Permissions)
    """What the tool is allowed to reach."""
    timeout_ms: int | None = Field(None, gt=0, le=MAX_TIMEOUT_MS, alias="timeoutMs")
    """How long one call may run, in milliseconds (a workbench extension of the format);
    absent means the host's `tools.timeout_ms` setting. The clock pauses while the tool
    waits on the person."""
    parallel_safe: bool = Field(False, alias="parallelSafe")
    """Whether calls of this tool may run at the same time as other parallel-safe calls
    of one model message (a workbench extension of the format); absent means no: such
    calls run one after another, in order."""
    action: bool = False
    """Whether the tool changes what the person keeps (a workbench extension of the
    format): it runs at once for the person and in an interactive chat, while an
    unattended call (a schedule, another agent, a headless run) needs the ``act``
    permission granted for it (``--grant TOOL:act``, a card grant, a standing grant)."""
    audience: Literal["everyone", "person"] = "everyone"
    """Who may call the tool (a workbench extension of the format): ``person`` keeps it
    from every model (never in a chat's tool list, refused when a model names it), while
    the person still runs it (`workbench call`, a page's action, an undo); absent means
    everyone."""
    replaces: list[Annotated[str, Field(pattern=TOOL_NAME_PATTERN)]] = Field(
        default_factory=list, max_length=8)
    """The built-in tools this one is offered in place of (a workbench extension of the
    format), e.g. ``["fetch_url"]``: in a chat that has the extension on, those built-ins
    (the built-in extension's, the host's own) are not offered. Honoured for a
    first-party add-on's tools only; any other extension's hides nothing."""


PROVIDER_NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
"""What a provider name must match: lowercase letters, digits, '_' and '-' (it is part
of a model spec such as ``ext:EXTENSION/NAME``, so it holds no ':' or '/')."""

ProviderType = Literal["model", "memory", "search"]
"""What a provider answers: the chat's model, memory search, or web search."""

MemoryScope = Literal["session", "agent", "workspace", "all"]
"""A scope a memory provider serves: one chat, the agent's own memories (seen by every
chat and folder), one workspace folder, or all of them."""


class ProviderConfig(BaseModel):
    """The provider's configuration, handed to its function with every call. The keys
    below mean something to the host; any other key is the provider's own."""

    model_config = ConfigDict(strict=True, extra="allow", populate_by_name=True,
                              frozen=True)

    enabled: bool = True
    """False registers the provider but keeps it from answering."""
    timeout_ms: int | None = Field(None, gt=0, le=MAX_TIMEOUT_MS)
    """How long one call may run, in milliseconds; absent means the host's tool timeout."""
    label: NonEmptyStr | None = None
    """A name for people, shown in the status report."""
    scopes: list[MemoryScope] | None = Field(None, min_length=1)
    """For a memory provider: the scopes it is asked for, in searches and when a memory is
    saved (session, agent, workspace, all); absent means all. A search serves the chat's
    session (in a chat), its workspace and the agent; a memory the person saves is the
    agent's."""
    priority: int = 0
    """For a search provider: the highest priority answers first (ties follow precedence)."""
    api_key_env: NonEmptyStr | None = None
    """For a model provider: the environment variable holding its API key (declare it
    under `permissions.env` too: the provider's worker sees only granted variables)."""


class Provider(BaseModel):
    """A provider the extension registers (a workbench extension of the format): a model
    a chat can talk to, a memory store that memory search also asks, or a web search. Its
    function runs like a tool, in a sandboxed worker with exactly the permissions granted
    to it, called as fn(request, ctx)."""

    model_config = _NESTED

    type: ProviderType
    """`model`, `memory` or `search`."""
    name: str = Field(pattern=PROVIDER_NAME_PATTERN)
    """Unique among the extension's providers of its type. A model provider is chosen
    with the model spec `ext:EXTENSION/NAME`, or `NAME` when no built-in model has it."""
    function: str = Field(pattern=EXPORT_NAME_PATTERN)
    """The name of the entry module's export that answers, called as fn(request, ctx)."""
    config: ProviderConfig = Field(default_factory=ProviderConfig)
    """Optional configuration passed to the provider with every request."""
    permissions: Permissions = Field(default_factory=Permissions)
    """What the provider's worker may reach (a model provider usually needs `net`)."""


class Memory(BaseModel):
    """A piece of knowledge or a skill the extension ships, installed read-only."""

    model_config = _NESTED

    kind: Literal["knowledge", "skill"]
    """`knowledge`: a single .md file; `skill`: a folder holding a SKILL.md."""
    path: RelativePath
    """Where it is, relative to the extension folder and inside it."""


PAGE_ID_PATTERN = r"^[a-z][a-z0-9-]{0,31}$"
"""What a page's id must match: it is typed on the command line (`workbench ext page EXT ID`)."""

MAX_PAGES = 20
"""The most pages one extension declares."""


class Page(BaseModel):
    """A page of the extension (a Workbench addition to the format): a card document
    (docs/cards.md) that one of the extension's own tools returns as ``{"card": …}``,
    drawn by the TUI's own widgets and printed by ``workbench ext page``. Its actions call
    tools the manifest declares, and no others."""

    model_config = _NESTED

    id: str = Field(pattern=PAGE_ID_PATTERN)
    """Unique in the extension: lowercase letters, digits and `-`, starting with a letter."""
    title: Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"\S")]
    """The page's name, shown in the Pages screen."""
    tool: str = Field(pattern=TOOL_NAME_PATTERN)
    """The tool of this extension (by its name in `tools`) that returns the page's card."""
    arguments: dict[str, Any] = {}
    """The arguments the tool is called with to open the page."""


class Manifest(BaseModel):
    """The whole of `loca.json`."""

    model_config = ConfigDict(strict=True, extra="forbid", populate_by_name=True,
                              frozen=True,
                              title="Loca extension manifest")

    schema_url: str | None = Field(None, alias="$schema")
    """The published schema, for editors' completion and validation."""
    name: str = Field(pattern=EXTENSION_NAME_PATTERN)
    """The machine name of the extension: 1 to 128 letters, digits, `.`, `_` or `-`,
    starting with a letter or digit (its folder's name)."""
    display_name: NonEmptyStr = Field(alias="displayName")
    """The name shown in the Extensions list."""
    description: NonEmptyStr
    """One or two sentences on what the person gets."""
    license: str | None = None
    """An SPDX license id."""
    homepage: str | None = None
    """A link to learn more."""
    database: bool = False
    """True when any tool uses ctx.db: a private SQLite database is provisioned."""
    tools: list[Tool] = []
    """The tools the extension provides; empty for a memories-only extension."""
    memories: list[Memory] = []
    """The knowledge and skills the extension ships."""
    hooks: dict[HookEvent, Annotated[str, Field(pattern=EXPORT_NAME_PATTERN)]] = {}
    """Functions of the entry module that observe or intercept the agent, by event (a
    workbench extension of the format): ``on_tool_call``, ``on_tool_result``,
    ``on_session_start``, ``on_session_shutdown``, and the observe-only lifecycle events
    ``on_agent_start``, ``on_agent_end``, ``on_turn_start``, ``on_turn_end``,
    ``on_message_start``, ``on_message_end``, ``on_tool_execution_start`` and
    ``on_tool_execution_end``. Each runs like a tool, in a sandboxed worker with no
    permissions, called as fn(event, ctx)."""
    providers: list[Provider] = []
    """Model, memory and search providers the extension registers (a workbench extension
    of the format). Built-in providers win a name; among extensions the first by name
    wins, and the others are reported as conflicts."""
    pages: list[Page] = Field([], max_length=MAX_PAGES)
    """Pages the extension shows (a workbench extension of the format), each a card
    document one of its own tools returns; see `Page`."""
    entry: EntryPath | None = None
    """The entry module's path relative to the folder (a workbench extension of the
    format). When absent the host takes the module deno.json exports, then the one
    package.json names (exports, then main), then looks for index.ts, index.js, mod.ts and
    main.py. The
    runtime follows from the suffix: .ts, .js, .mts, .mjs, .tsx and .jsx run under Deno,
    .py in Python."""

    def tool(self, name: str) -> Tool | None:
        """Return the tool called `name`, or `None`."""
        return next((tool for tool in self.tools if tool.name == name), None)

    def page(self, page_id: str) -> Page | None:
        """Return the page whose id is `page_id`, or `None`."""
        return next((page for page in self.pages if page.id == page_id), None)

    def resolve_entry(self, folder: Path) -> Entry:
        """Find the entry module of the extension installed in `folder`.

        Args:
            folder: The extension folder.

        Returns:
            The entry module's absolute path and runtime.

        Raises:
            ManifestError: No entry module exists where the manifest says, or at any of
                the default places.
        """
        found = find_entry(folder, self.entry)
        if found is None:
            looked = self.entry if self.entry is not None else ", ".join(entry_candidates(folder))
            raise ManifestError(f"no entry module found (looked for {looked})",
                                where=str(folder))
        return found

    def runtime(self, folder: Path) -> Runtime:
        """Return how the extension in `folder` runs: `"deno"` or `"python"`.

        Raises:
            ManifestError: No entry module exists.
        """
        return self.resolve_entry(folder).runtime
