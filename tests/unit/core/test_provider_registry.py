"""Provider precedence: built-in providers win their names, then the first extension by
name; every loser is a conflict naming its winner, and a chat's switched-off extensions
give a name to the next provider. Memory providers are asked for the scopes they serve."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.core.provider_registry import (ProviderRegistry, RegisteredProvider, conflict_json,
                                              search_scopes)


def provider(type: str, name: str, extension: str, *, source: str = "extension",
             **config) -> RegisteredProvider:
    folder = Path("/extensions") / extension
    return RegisteredProvider(type=type, name=name, extension=extension, source=source,
                              function=f"{type}_{name}", folder=folder, entry=folder / "main.py",
                              runtime="python", config=config)


@pytest.fixture
def registry() -> ProviderRegistry:
    registry = ProviderRegistry()
    # Registered in an order that is not the precedence, to show the order is the rule's.
    for item in (provider("model", "shared", "zed"), provider("model", "shared", "acme"),
                 provider("model", "echo", "acme"), provider("memory", "local", "zed"),
                 provider("memory", "team", "zed"), provider("search", "web", "acme"),
                 provider("search", "web", "mid", source="builtin"),
                 provider("model", "only", "zed", enabled=False)):
        registry.add(item)
    return registry


def test_the_first_extension_by_name_wins_and_the_built_in_source_first(registry):
    assert registry.resolve("model", "shared").extension == "acme"
    # The built-in extension's provider wins over any extension's, whatever the names.
    assert registry.resolve("search", "web").extension == "mid"


def test_built_in_providers_hold_their_names(registry):
    assert registry.resolve("model", "echo") is None
    assert registry.resolve("memory", "local") is None
    assert [p.qualified_name for p in registry.winners("model")] == ["zed/only", "acme/shared"]
    assert [p.qualified_name for p in registry.winners("memory")] == ["zed/team"]


def test_a_shadowed_provider_is_still_reached_by_its_extension(registry):
    assert registry.get("model", "zed", "shared").extension == "zed"
    assert registry.get("model", "acme", "echo").function == "model_echo"
    assert registry.get("model", "nobody", "shared") is None


def test_conflicts_name_the_winner_and_every_shadowed_provider(registry):
    assert [conflict_json(c) for c in registry.conflicts()] == [
        {"type": "model", "name": "echo", "winner": {"source": "builtin", "extension": "workbench"},
         "shadowed": [{"source": "extension", "extension": "acme"}]},
        {"type": "model", "name": "shared", "winner": {"source": "extension", "extension": "acme"},
         "shadowed": [{"source": "extension", "extension": "zed"}]},
        {"type": "memory", "name": "local", "winner": {"source": "builtin", "extension": "workbench"},
         "shadowed": [{"source": "extension", "extension": "zed"}]},
        {"type": "search", "name": "web", "winner": {"source": "builtin", "extension": "mid"},
         "shadowed": [{"source": "extension", "extension": "acme"}]},
    ]


def test_the_registration_report_has_the_seeds_shape(registry):
    report = registry.registration()
    assert (report["total_registered"], report["total_conflicts"]) == (4, 4)
    assert [(p["type"], p["name"], p["extension"], p["enabled"]) for p in report["registered"]] == [
        ("model", "only", "zed", False), ("model", "shared", "acme", True),
        ("memory", "team", "zed", True), ("search", "web", "mid", True)]


def test_a_switched_off_extension_gives_its_names_to_the_next(registry):
    assert registry.resolve("model", "shared", exclude={"acme"}).extension == "zed"
    assert registry.resolve("model", "shared", exclude={"acme", "zed"}) is None
    assert [p.qualified_name for p in registry.winners("search", exclude={"mid"})] == ["acme/web"]


def test_keys_priority_and_the_enabled_switch(registry):
    web = provider("search", "web", "acme", priority=7)
    assert (web.key, web.qualified_name, web.priority, web.enabled) == (
        "search:acme/web", "acme/web", 7, True)
    assert provider("search", "x", "a", priority=True).priority == 0
    assert not registry.get("model", "zed", "only").enabled


def test_memory_providers_serve_the_scopes_they_list_all_when_none():
    registry = ProviderRegistry()
    for item in (provider("memory", "any", "acme"), provider("memory", "every", "acme", scopes=["all"]),
                 provider("memory", "chat", "acme", scopes=["session"]),
                 provider("memory", "mine", "acme", scopes=["agent", "session"]),
                 provider("memory", "off", "acme", scopes=["agent"], enabled=False),
                 provider("memory", "other", "zed")):
        registry.add(item)
    assert registry.get("memory", "acme", "every").scopes == ("session", "agent", "workspace")
    assert registry.get("memory", "acme", "mine").scopes == ("session", "agent")
    assert search_scopes("s1") == ("session", "agent", "workspace")
    assert search_scopes(None) == ("agent", "workspace")

    def names(scopes, exclude=()):
        return [p.name for p in registry.memory_providers(scopes, exclude)]

    assert names(("agent",)) == ["any", "every", "mine", "other"]
    assert names(search_scopes(None)) == ["any", "every", "mine", "other"]
    assert names(search_scopes("s1"), exclude={"zed"}) == ["any", "chat", "every", "mine"]
    assert registry.get("memory", "acme", "chat").to_json()["scopes"] == ["session"]
    assert "scopes" not in provider("model", "m", "acme").to_json()


def test_unknown_types_and_sources_are_refused():
    registry = ProviderRegistry()
    with pytest.raises(ValueError, match="unknown provider type"):
        registry.add(provider("storage", "s", "acme"))
    with pytest.raises(ValueError, match="unknown provider source"):
        registry.add(provider("model", "s", "acme", source="wasm"))
    registry.add(provider("model", "m", "acme"))
    registry.clear()
    assert registry.all() == [] and registry.conflicts() == []
