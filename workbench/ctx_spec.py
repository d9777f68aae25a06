"""The permission kinds and the ctx capabilities, declared once.

A *permission kind* is one key of a tool's ``permissions`` in its manifest. The OS
family (``net``, ``read``, ``write``, ``run``, ``env``, ``ffi``, ``sys``) is enforced
by the sandbox; the capability family (``memories``, ``llm``, ``tts``, ``stt``) is
brokered by the host when the tool first reaches for it. Each kind says which field
of an entry names what it grants (``path``, ``host``…; none for an all-or-nothing
kind), its access levels if it has some (``memories``: read, then write, which covers
read), and what it lets a tool do in the words a permission prompt uses.

A *ctx capability* is a set of ``ctx`` members that need the host's answer: a group
(``ctx.memories``, ``ctx.db``…) or one top-level member (``ctx.askUser``). Each says
how it is gated: by its permission kind (asked for at first use), by the manifest's
``"database": true``, or by the form the person answers.

Everything else reads this module: the manifest's permission models, the consent and
its diff, the requirements a grant is made of, the permission prompt's words, the
host's ctx handler (one handler per capability, registered with
``core.ctx_handler.handles``), ``workbench.testing.MockContext``, and both worker shims,
which build their ``ctx`` members from ``wire()`` sent with each call. Adding a
capability is a ``Capability`` here (or a ``register`` call) and its handler.

Imports nothing but the standard library (a leaf, like the worker protocol beside
which it is read): the Python worker loads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as _field
from types import MappingProxyType
from typing import Any, Literal

Family = Literal["os", "capability"]
Gate = Literal["permission", "database", "form"]


@dataclass(frozen=True)
class PermissionKind:
    """One key of a tool's ``permissions``.

    Attributes:
        kind: The key (``read``, ``memories``…).
        family: ``os`` (the sandbox enforces it) or ``capability`` (the host brokers it).
        label: What it lets a tool do, as the permission prompt says it (``Read``,
            ``Ask your model for completions``).
        field: The entry's field that names what it grants (``path``, ``host``…), or
            ``None`` for an all-or-nothing kind.
        default: The field's value when an entry leaves it out.
        access: The access levels, narrowest first, when it has some; a level covers
            the ones before it.
        access_labels: The label of each access level.
        description: What the manifest's schema says of the key.
    """

    kind: str
    family: Family
    label: str
    field: str | None = None
    default: str = ""
    access: tuple[str, ...] = ()
    access_labels: Mapping[str, str] = _field(default_factory=dict)
    description: str = ""

    def value_of(self, entry: Mapping[str, Any]) -> str:
        """What one entry names (its ``field``), or ``""`` for an all-or-nothing kind.
        (``net``, whose entry has a host and ports, is spelled by its readers.)"""
        return "" if self.field is None else str(entry.get(self.field, self.default))

    def label_for(self, value: str) -> str:
        """The prompt's words for an entry naming ``value`` (an access level picks its own)."""
        return self.access_labels.get(value, self.label)

    def covers(self, held: str, wanted: str) -> bool:
        """Whether an entry naming ``held`` grants a use that needs ``wanted``: the same
        value, or for a kind with access levels, one at least as wide."""
        if self.access and held in self.access and wanted in self.access:
            return self.access.index(held) >= self.access.index(wanted)
        return held == wanted or not self.field


@dataclass(frozen=True)
class Member:
    """One ``ctx`` member that asks the host and waits for its answer.

    Attributes:
        name: Its Python name (``get_file``).
        params: Its positional parameters, as they are named on the wire.
        js: Its TypeScript name (``getFile``); camelCase of ``name`` when left empty.
        access: The access level of the capability's permission it needs (``read``,
            ``write``), empty for an all-or-nothing one.
        defaults: What a parameter left out is sent as (``db.query``'s params: ``[]``).
    """

    name: str
    params: tuple[str, ...] = ()
    js: str = ""
    access: str = ""
    defaults: Mapping[str, Any] = _field(default_factory=dict)

    @property
    def ts(self) -> str:
        if self.js:
            return self.js
        head, *rest = self.name.split("_")
        return head + "".join(word.title() for word in rest)


@dataclass(frozen=True)
class Capability:
    """A group of ``ctx`` members the host answers (``ctx.memories``), or, with
    ``top_level``, one member of ``ctx`` itself (``ctx.askUser``).

    Attributes:
        name: The group's name on ``ctx``, which is also its handler's name; for a
            top-level capability, its one member's TypeScript name.
        members: What it offers.
        gate: What must hold before a member is answered: ``permission`` (its
            ``permission`` kind, declared in the manifest and granted by the person at
            first use), ``database`` (the manifest's ``"database": true``), or ``form``
            (nothing: the form the person answers is the gate).
        permission: Its permission kind, for the ``permission`` gate.
        top_level: Its one member sits on ``ctx`` itself, not in a group.
    """

    name: str
    members: tuple[Member, ...]
    gate: Gate
    permission: PermissionKind | None = None
    top_level: bool = False

    def __post_init__(self) -> None:
        if (self.gate == "permission") != (self.permission is not None):
            raise ValueError(f"ctx capability {self.name}: a permission gate needs its "
                             "permission kind, and only that gate has one")
        if self.top_level and len(self.members) != 1:
            raise ValueError(f"ctx capability {self.name}: a top-level one has one member")

    def method(self, member: Member) -> str:
        """The member's request on the wire, without its ``ctx/`` prefix."""
        return self.name if self.top_level else f"{self.name}.{member.name}"


OS_PERMISSIONS: tuple[PermissionKind, ...] = (
    PermissionKind("net", "os", "Connect to", field="host", description="Network hosts and ports."),
    PermissionKind("read", "os", "Read", field="path", description="Files or folders to read."),
    PermissionKind("write", "os", "Write to", field="path", description="Files or folders to write."),
    PermissionKind("run", "os", "Run the program", field="binary", description="Executables to run."),
    PermissionKind("env", "os", "Read the environment variable", field="key",
                   description="Environment variables to read."),
    PermissionKind("ffi", "os", "Load native libraries", description="Native libraries to load."),
    PermissionKind("sys", "os", "Use the system interface", field="flag",
                   description="System APIs to reach."),
)
"""The OS family, in the order they are shown."""

MEMORIES = PermissionKind(
    "memories", "capability", "Read your memories", field="access", default="read",
    access=("read", "write"),
    access_labels={"read": "Read your memories", "write": "Read and change your memories"},
    description=("The person's memories, with read or write access: one entry, or a list (a "
                 "read entry and a write entry, each with its reason)."))
LLM = PermissionKind("llm", "capability", "Ask your model for completions",
                     description="One completion at a time from the person's model.")
TTS = PermissionKind("tts", "capability", "Turn text into speech",
                     description="Speech synthesis (also needs Text-to-Speech on).")
STT = PermissionKind("stt", "capability", "Transcribe speech",
                     description="Transcription (also needs Speech-to-Text on).")

BUILTIN: tuple[Capability, ...] = (
    Capability("askUser", (Member("ask_user", ("questions",)),), "form", top_level=True),
    Capability("memories", (
        Member("list", access="read"), Member("get", ("title",), access="read"),
        Member("get_file", ("title", "name"), access="read"),
        Member("write", ("title", "content"), access="write"),
        Member("edit", ("title", "find", "replace"), access="write")), "permission", MEMORIES),
    Capability("db", (Member("query", ("sql", "params"), defaults={"params": []}),
                      Member("execute", ("sql", "params"), defaults={"params": []})), "database"),
    Capability("llm", (Member("complete", ("request",)),), "permission", LLM),
    Capability("tts", (Member("speak", ("text",)),), "permission", TTS),
    Capability("stt", (Member("transcribe", ("request",)),), "permission", STT),
    Capability("schedulePrompt", (Member("schedule_prompt", ("draft",)),), "form", top_level=True),
)
"""The capabilities every host offers."""

_capabilities: dict[str, Capability] = {c.name: c for c in BUILTIN}

_wire: tuple[dict[str, Any], ...] | None = None

LOCAL = ("signal", "display", "log", "set_progress", "setProgress", "get_chat_context",
         "getChatContext")
"""The members each shim answers itself, which no capability may be named."""


def register(capability: Capability) -> Capability:
    """Add a capability (its handler is registered with ``core.ctx_handler.handles``).

    Raises:
        ValueError: A capability or permission kind of that name exists, or its name is
            one of the shims' own members (``LOCAL``) or no identifier.
    """
    names = [capability.name] + [m.name for m in capability.members if capability.top_level]
    if any(not name.isidentifier() or name in LOCAL for name in names):
        raise ValueError(f"ctx capability {capability.name!r}: not a name ctx can give it")
    if capability.name in _capabilities:
        raise ValueError(f"ctx already has a capability {capability.name!r}")
    if capability.permission is not None and capability.permission.family != "capability":
        raise ValueError(f"ctx capability {capability.name!r}: its permission kind must be "
                         "of the capability family")
    if capability.permission is not None and capability.permission.kind in permission_kinds():
        raise ValueError(f"a permission kind {capability.permission.kind!r} exists")
    global _wire
    _capabilities[capability.name] = capability
    _wire = None
    return capability


def unregister(name: str) -> None:
    """Take back a capability ``register`` added (the built-in ones stay)."""
    if any(c.name == name for c in BUILTIN):
        raise ValueError(f"{name!r} is a built-in ctx capability")
    global _wire
    _capabilities.pop(name, None)
    _wire = None


def capabilities() -> tuple[Capability, ...]:
    """Every ctx capability, built-in ones first."""
    return tuple(_capabilities.values())


def capability(name: str) -> Capability | None:
    return _capabilities.get(name)


def find(method: str) -> tuple[Capability, Member] | None:
    """The capability and member a request names (``memories.get``, ``askUser``), if any."""
    name, _, member = method.partition(".")
    found = _capabilities.get(name)
    if found is None or found.top_level != (member == ""):
        return None
    for candidate in found.members:
        if found.method(candidate) == method:
            return found, candidate
    return None


def capability_permissions() -> tuple[PermissionKind, ...]:
    """The capability family of permission kinds, in the order they are shown."""
    return tuple(c.permission for c in _capabilities.values() if c.permission is not None)


def all_permissions() -> tuple[PermissionKind, ...]:
    """Every permission kind: the OS family, then the capability family."""
    return OS_PERMISSIONS + capability_permissions()


def permission_kinds() -> tuple[str, ...]:
    """Every permission kind's key, in the order they are shown."""
    return tuple(p.kind for p in all_permissions())


def os_kinds() -> tuple[str, ...]:
    return tuple(p.kind for p in OS_PERMISSIONS)


def capability_kinds() -> tuple[str, ...]:
    return tuple(p.kind for p in capability_permissions())


def permission(kind: str) -> PermissionKind | None:
    """The permission kind ``kind`` names, if it is one."""
    for candidate in all_permissions():
        if candidate.kind == kind:
            return candidate
    return None


def groups() -> Mapping[str, tuple[str, ...]]:
    """Each ctx group and its members' Python names."""
    return MappingProxyType({c.name: tuple(m.name for m in c.members)
                             for c in _capabilities.values() if not c.top_level})


def top_level() -> tuple[str, ...]:
    """The Python names of the top-level members that ask the host."""
    return tuple(c.members[0].name for c in _capabilities.values() if c.top_level)


def wire() -> tuple[dict[str, Any], ...]:
    """The members as the worker shims build them, sent with each call: one object per
    member with its group (empty on ``ctx`` itself), Python and TypeScript names, the
    request it sends, its parameters and their defaults. Built once per set of
    capabilities; not to be changed by its readers."""
    global _wire
    if _wire is None:
        _wire = tuple({"group": "" if c.top_level else c.name, "name": m.name, "js": m.ts,
                       "method": "ctx/" + c.method(m), "params": list(m.params),
                       "defaults": dict(m.defaults)}
                      for c in _capabilities.values() for m in c.members)
    return _wire


def net_text(value: str) -> str:
    """A `net` permission's value (`host:443,80`, `host:*`, `*:443`) as a person reads it:
    `"*"` is spelled out, as `any host` and `any port`."""
    host, colon, ports = value.rpartition(":")
    if not colon:
        host, ports = value, ""
    where = "any host" if host == "*" else host
    if ports == "*":
        return f"{where}, any port"
    if not ports:
        return where
    return f"any host, port {ports}" if host == "*" else value
