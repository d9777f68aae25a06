"""The providers extensions register: models, memory stores and web searches, and which
one a name means.

Precedence follows the tools': the built-in providers always win their names (the
models ``auto``, ``echo``, ``openai``, ``anthropic``, ``local`` and ``scripted``, and
the memory provider ``local``, which is the person's memories in the store), then the
first extension by name. A shadowed provider is never dropped in silence:
``conflicts()`` names it with its winner, and ``get(type, extension, name)`` still
reaches it (the model spec ``ext:EXTENSION/NAME``). ``resolve`` and ``winners`` can
leave some extensions out (those a chat switched off): the next provider by precedence
then takes the name.

This module imports the built-in model names and the tools' source order; nothing runs
here, and it must not import a front-end.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.agent.providers import BUILTIN_MODELS
from workbench.errors import ToolError
from workbench.permissions.requirements import Requirement, TemplateRoots, requirements_of
from workbench.precedence import SOURCE_ORDER, Conflict, Party, PrecedenceRegistry, source_rank
from workbench.tools.registry import Tool

PROVIDER_TYPES = ("model", "memory", "search")
"""What a provider answers, in the order the status report lists them."""

BUILTIN_PROVIDERS: dict[str, tuple[str, ...]] = {
    "model": BUILTIN_MODELS,
    "memory": ("local",),
    "search": (),
}
"""The names the host's own providers hold, per type; an extension's provider of the
same name is shadowed."""

BUILTIN_OWNER = "workbench"
"""How the status report names the host when a built-in provider wins a name."""

MEMORY_SCOPES = ("session", "agent", "workspace")
"""What a memory request is about: one chat, what the agent keeps across chats and
folders (the person's memories), one workspace folder. A memory provider's
``config.scopes`` lists those it serves; ``all`` (or no list) means every one."""


def search_scopes(session_id: str | None) -> tuple[str, ...]:
    """The scopes a memory search serves: the chat (when there is one), its workspace
    and the agent."""
    return MEMORY_SCOPES if session_id else ("agent", "workspace")


@dataclass(frozen=True)
class RegisteredProvider:
    """One provider an extension registers, as the host sees it.

    Attributes:
        type: ``model``, ``memory`` or ``search``.
        name: Its name, unique per type within its extension.
        extension: The extension registering it.
        source: ``builtin`` or ``extension``: its place in the precedence.
        function: The entry module's export that answers, called as ``fn(request, ctx)``.
        folder: The extension's folder.
        entry: The entry module.
        runtime: ``python`` or ``deno``.
        config: Its configuration, handed to the function with every request.
        permissions: What its worker may reach, in the manifest's shape.
        database: Whether its extension has a private database (``ctx.db``).
    """

    type: str
    name: str
    extension: str
    source: str
    function: str
    folder: Path
    entry: Path
    runtime: str
    config: dict[str, Any] = field(default_factory=dict)
    permissions: dict[str, Any] = field(default_factory=dict)
    database: bool = False
    owner: str = ""
    """The extension's identity when it is not its name (a project's: ``project:FOLDER``)."""

    @property
    def qualified_name(self) -> str:
        """``EXTENSION/NAME``: how people and model specs (``ext:EXTENSION/NAME``) name it."""
        return f"{self.extension}/{self.name}"

    @property
    def key(self) -> str:
        """``TYPE:EXTENSION/NAME``: what its grants and audit entries are kept under (the
        extension's identity in place of its name for a project's)."""
        return f"{self.type}:{self.owner or self.extension}/{self.name}"

    def as_tool(self) -> Tool:
        """The provider as the sandbox runner runs it: a tool of its extension (its grants'
        network refusals are audited under this tool's name)."""
        return Tool(name=f"provider-{self.type}-{self.name}",
                    description=f"the {self.type} provider {self.qualified_name}",
                    parameters={"type": "object"}, extension=self.extension,
                    source=self.source, function=self.function, folder=self.folder,
                    entry=self.entry, runtime=self.runtime, permissions=self.permissions,
                    database=self.database, owner=self.owner)

    def requirements(self, roots: TemplateRoots) -> list[Requirement]:
        """Its declared permissions, templates expanded against ``roots``.

        Raises:
            ToolError: (permission) a declared path cannot be expanded.
        """
        try:
            return requirements_of(self.permissions, roots=roots, extension_dir=self.folder,
                                   extension=self.extension)
        except ValueError as exc:
            raise ToolError("permission", str(exc)) from exc

    @property
    def enabled(self) -> bool:
        """False when its config says ``"enabled": false``: registered, never asked."""
        return self.config.get("enabled", True) is not False

    @property
    def scopes(self) -> tuple[str, ...]:
        """A memory provider's scopes (``MEMORY_SCOPES``): those its config lists, every
        one when it lists ``all`` or none."""
        listed = self.config.get("scopes")
        if not isinstance(listed, list) or "all" in listed:
            return MEMORY_SCOPES
        return tuple(scope for scope in MEMORY_SCOPES if scope in listed)

    def serves(self, scopes: Collection[str]) -> bool:
        """Whether it is asked for a request about ``scopes``."""
        return any(scope in self.scopes for scope in scopes)

    @property
    def priority(self) -> int:
        """A search provider's ``priority`` (the highest answers first)."""
        value = self.config.get("priority", 0)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    def rank(self) -> tuple[int, str]:
        return (source_rank(self.source), self.extension)

    def party(self) -> Party:
        return Party(self.source, self.extension, self.qualified_name)

    def to_json(self) -> dict[str, Any]:
        data = {"type": self.type, "name": self.name, "extension": self.extension,
                "source": self.source, "function": self.function,
                "label": self.config.get("label"), "enabled": self.enabled}
        if self.type == "memory":
            data["scopes"] = list(self.scopes)
        return data


class ProviderRegistry:
    """Every provider the loaded extensions register, by type and name."""

    def __init__(self) -> None:
        self._by_name: PrecedenceRegistry[tuple[str, str], RegisteredProvider] = PrecedenceRegistry(
            rank=RegisteredProvider.rank, party=RegisteredProvider.party, describe=lambda key: key)

    def clear(self) -> None:
        """Forget every provider (before a reload)."""
        self._by_name.clear()

    def add(self, provider: RegisteredProvider) -> None:
        """Register ``provider``; precedence decides whether it wins its name."""
        if provider.type not in PROVIDER_TYPES:
            raise ValueError(f"unknown provider type {provider.type!r}")
        if provider.source not in SOURCE_ORDER:
            raise ValueError(f"unknown provider source {provider.source!r}")
        self._by_name.add((provider.type, provider.name), provider)

    def all(self, type: str | None = None) -> list[RegisteredProvider]:
        """Every provider (of ``type``), shadowed ones included, by type then name."""
        return [p for key in self._by_name.keys(_order) for p in self._by_name.candidates(key)
                if type is None or p.type == type]

    def get(self, type: str, extension: str, name: str) -> RegisteredProvider | None:
        """The provider ``name`` of ``extension``, whether it wins its name or not."""
        return self._by_name.first((type, name), lambda p: p.extension == extension)

    def resolve(self, type: str, name: str, exclude: Collection[str] = ()) -> RegisteredProvider | None:
        """The extension provider ``name`` means, or None when a built-in holds the name
        or no extension (outside ``exclude``) registers it."""
        if name in BUILTIN_PROVIDERS[type]:
            return None
        return self._by_name.first((type, name), lambda p: p.extension not in exclude)

    def winners(self, type: str, exclude: Collection[str] = ()) -> list[RegisteredProvider]:
        """The provider that wins each name of ``type``, leaving out ``exclude``'s
        extensions (a name one of them won goes to the next by precedence) and names a
        built-in holds; by name."""
        found = []
        for kind, name in self._by_name.keys():
            if kind == type:
                winner = self.resolve(type, name, exclude)
                if winner is not None:
                    found.append(winner)
        return found

    def memory_providers(self, scopes: Collection[str], exclude: Collection[str] = ()
                         ) -> list[RegisteredProvider]:
        """The memory providers asked for a request about ``scopes``: those that win their
        names outside ``exclude``'s extensions, are on, and serve one of ``scopes``."""
        return [p for p in self.winners("memory", exclude) if p.enabled and p.serves(scopes)]

    def conflicts(self) -> list[Conflict]:
        """Every name registered more than once, or registered over a built-in (the
        host holds it: ``Party("builtin", BUILTIN_OWNER)``); the ``kind`` of each is the
        provider type."""
        return self._by_name.conflicts(order=_order, held=_held_by_host)

    def registration(self) -> dict[str, Any]:
        """What the status report says of providers (its ``provider_registration``):
        ``registered`` (the winners), ``conflicts`` (``{"type", "name", "winner",
        "shadowed"}``, each party ``{"source", "extension"}``), ``total_registered`` and
        ``total_conflicts``."""
        winners = [p for type in PROVIDER_TYPES for p in self.winners(type)]
        conflicts = [conflict_json(c) for c in self.conflicts()]
        return {"registered": [p.to_json() for p in winners], "conflicts": conflicts,
                "total_registered": len(winners), "total_conflicts": len(conflicts)}


def conflict_json(conflict: Conflict) -> dict[str, Any]:
    """A provider conflict as the status report gives it: ``{"type", "name", "winner",
    "shadowed"}``, each party ``{"source", "extension"}``."""
    data = conflict.to_json()
    return {"type": data.pop("kind"), **data}


def _held_by_host(key: tuple[str, str]) -> Party | None:
    type, name = key
    return Party("builtin", BUILTIN_OWNER) if name in BUILTIN_PROVIDERS[type] else None


def _order(key: tuple[str, str]) -> tuple[int, str]:
    return (PROVIDER_TYPES.index(key[0]), key[1])
