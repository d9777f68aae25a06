"""Hook conflicts reach the status report as tool conflicts do: through the extensions'
source, counted in the title, listed in the JSON, the markdown and the text."""

from __future__ import annotations

from pathlib import Path

from workbench.core.host import Host
from workbench.core.status import build_status_report
from workbench.hooks.registry import Hook, HookRegistry
from workbench.tools.registry import ToolRegistry


def test_a_hook_name_given_twice_is_reported_with_the_one_that_runs():
    hooks = HookRegistry()
    for source in ("extension", "builtin"):
        hooks.add(Hook(extension="guard", event="on_tool_call", function="check", folder=Path("."),
                       entry=Path("main.py"), runtime="python", source=source))
    report = build_status_report(loaded=[], registry=ToolRegistry(platforms={"linux"}), shipped=[],
                                 conflicts=hooks.conflicts())
    assert report.to_json()["hook_conflicts"] == [{
        "hook_name": "guard.on_tool_call", "winner": {"source": "builtin", "extension": "guard"},
        "shadowed": [{"source": "extension", "extension": "guard"}]}]
    assert report.to_json()["tool_conflicts"]["conflicts"] == []
    assert "1 conflicts" in report.title()
    assert "### Hook Conflicts" in report.to_markdown()
    assert "guard.on_tool_call" in report.to_markdown()
    assert "Hook conflicts: 1" in report.to_text()


def test_no_hook_given_twice_no_hook_conflicts():
    report = build_status_report(loaded=[], registry=ToolRegistry(platforms={"linux"}), shipped=[],
                                 conflicts=HookRegistry().conflicts())
    assert report.to_json()["hook_conflicts"] == []
    assert "conflicts" not in report.title() and "Hook" not in report.to_text()


def test_the_hosts_report_takes_hook_conflicts_from_the_extensions_source(workdir: Path):
    with Host.open(cwd=workdir, model="echo") as host:
        host.loading.ensure()
        for source in ("extension", "builtin"):
            host.hooks.add(Hook(extension="guard", event="on_turn_end", function="check",
                                folder=workdir, entry=workdir / "main.py", runtime="python",
                                source=source))
        (conflict,) = host.tools.status_report().hook_conflicts
        assert conflict["hook_name"] == "guard.on_turn_end"
        assert conflict["winner"] == {"source": "builtin", "extension": "guard"}
        assert [h.source for h in host.hooks.for_event("on_turn_end")] == ["builtin"]
