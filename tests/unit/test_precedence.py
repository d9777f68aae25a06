"""The one precedence rule tools, providers and hooks share, and its one ``Conflict`` shape."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from workbench.core.provider_registry import ProviderRegistry, RegisteredProvider
from workbench.hooks.registry import Hook, HookRegistry
from workbench.precedence import Conflict, Party, PrecedenceRegistry, source_rank
from workbench.tools.registry import Tool, ToolRegistry


@dataclass(frozen=True)
class Thing:
    name: str
    source: str
    extension: str

    def rank(self) -> tuple[int, str]:
        return (source_rank(self.source), self.extension)

    def party(self) -> Party:
        return Party(self.source, self.extension)


def things() -> PrecedenceRegistry[str, Thing]:
    return PrecedenceRegistry(rank=Thing.rank, party=Thing.party, describe=lambda k: ("thing", k))


def test_the_first_by_source_then_extension_wins_and_the_rest_are_shadowed():
    registry = things()
    for thing in (Thing("a", "mcp", "mcp:x"), Thing("a", "extension", "zed"),
                  Thing("a", "extension", "acme"), Thing("b", "plugin", "p")):
        registry.add(thing.name, thing)
    assert [t.extension for t in registry.candidates("a")] == ["acme", "zed", "mcp:x"]
    assert registry.first("a", lambda t: t.extension != "acme").extension == "zed"
    assert registry.conflicts() == [Conflict("thing", "a", Party("extension", "acme"),
                                             (Party("extension", "zed"), Party("mcp", "mcp:x")))]


def test_a_key_held_outside_the_registry_shadows_even_a_lone_candidate():
    registry = things()
    registry.add("local", Thing("local", "extension", "zed"))
    held = registry.conflicts(held=lambda key: Party("builtin", "workbench"))
    assert [c.to_json() for c in held] == [{"kind": "thing", "name": "local",
                                            "winner": {"source": "builtin", "extension": "workbench"},
                                            "shadowed": [{"source": "extension", "extension": "zed"}]}]


def test_withdrawn_candidates_leave_no_empty_key():
    registry = things()
    registry.add("a", Thing("a", "extension", "zed"))
    registry.remove_where(lambda t: t.extension == "zed")
    assert registry.keys() == [] and list(registry) == []


def test_an_unknown_source_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown source 'elsewhere'"):
        source_rank("elsewhere")


def tool(name: str, source: str, extension: str) -> Tool:
    return Tool(name=name, description="", parameters={}, extension=extension, source=source,
                function=name, folder=Path("."), entry=None, runtime="python")


def test_tools_providers_and_hooks_report_conflicts_in_the_same_shape():
    tools = ToolRegistry(platforms={"linux"})
    tools.add(tool("echo", "extension", "zed"))
    tools.add(tool("echo", "builtin", "core"))
    providers = ProviderRegistry()
    for extension in ("zed", "acme"):
        providers.add(RegisteredProvider(type="model", name="shared", extension=extension,
                                         source="extension", function="f", folder=Path("."),
                                         entry=Path("main.py"), runtime="python"))
    hooks = HookRegistry()
    for source in ("extension", "builtin"):
        hooks.add(Hook(extension="zed", event="on_turn_end", function="f", folder=Path("."),
                       entry=Path("main.py"), runtime="python", source=source))
    (of_tools,) = tools.conflicts()
    (of_providers,) = providers.conflicts()
    (of_hooks,) = hooks.conflicts()
    assert type(of_tools) is type(of_providers) is type(of_hooks) is Conflict
    assert (of_hooks.kind, of_hooks.name, of_hooks.winner.source) == ("hook", "zed.on_turn_end", "builtin")
    assert (of_tools.kind, of_tools.winner, of_tools.shadowed) == (
        "tool", Party("builtin", "core", "core.echo"), (Party("extension", "zed", "zed.echo"),))
    assert (of_providers.kind, of_providers.winner.extension,
            [p.qualified for p in of_providers.shadowed]) == ("model", "acme", ["zed/shared"])
