"""The hook registry takes the one precedence rule: hooks run in registration order, and
a hook name (``EXTENSION.EVENT``) given twice is a ``Conflict`` as a tool name is."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.hooks.registry import Hook, HookRegistry
from workbench.precedence import Conflict, Party


def hook(extension: str, event: str = "on_tool_call", source: str = "extension",
         function: str = "fn") -> Hook:
    return Hook(extension=extension, event=event, function=function, folder=Path("/x"),
                entry=Path("/x/main.py"), runtime="python", source=source)


def test_hooks_run_in_the_order_they_were_registered_not_by_name():
    hooks = HookRegistry()
    for name in ("workbench", "zed", "acme"):
        hooks.add(hook(name))
    hooks.add(hook("acme", "on_turn_end"))
    assert [h.extension for h in hooks.for_event("on_tool_call")] == ["workbench", "zed", "acme"]
    assert [h.extension for h in hooks.for_event("on_tool_call", {"zed"})] == ["workbench", "acme"]
    assert [h.name for h in hooks.all()] == ["workbench.on_tool_call", "zed.on_tool_call",
                                             "acme.on_tool_call", "acme.on_turn_end"]
    assert hooks.conflicts() == []


def test_a_hook_name_given_twice_runs_the_first_by_precedence_and_names_the_conflict():
    hooks = HookRegistry()
    hooks.add(hook("acme", function="theirs"))
    hooks.add(hook("acme", source="builtin", function="ours"))
    assert [h.function for h in hooks.for_event("on_tool_call")] == ["ours"]
    assert [h.function for h in hooks.all()] == ["ours", "theirs"]  # shadowed, never dropped
    assert hooks.conflicts() == [Conflict("hook", "acme.on_tool_call", Party("builtin", "acme"),
                                          (Party("extension", "acme"),))]
    hooks.clear()
    assert hooks.all() == [] and hooks.conflicts() == []


def test_an_unknown_event_or_source_is_refused_by_name():
    hooks = HookRegistry()
    with pytest.raises(ValueError, match="unknown hook event 'on_nothing'"):
        hooks.add(hook("acme", "on_nothing"))
    with pytest.raises(ValueError, match="unknown hook source 'elsewhere'"):
        hooks.add(hook("acme", source="elsewhere"))
