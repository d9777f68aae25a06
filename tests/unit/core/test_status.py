"""The extension status report, its renderings, and the ``extensions_status`` host-native tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from extension_folders import write_extension

from workbench.config.home import Home
from workbench.config.trust import trust_project
from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.core.host_tools import RELOAD_WHILE_STREAMING, host_tools
from workbench.core.load_record import LoadRecord
from workbench.core.runner import Dispatcher
from workbench.core.status import ExtensionEntry, LoadProblem, SessionContext, StatusReport
from workbench.events import ExtensionStatusChanged, ToolCallEnded, ToolCallStarted
from workbench.tools.loader import BUILTIN_DIR
from workbench.ext.manager import ExtensionManager
from workbench.store import Store
from workbench.tools.context import ToolContext
from workbench.tools.registry import HOST_RUNTIME, Tool, ToolRegistry
from workbench.tools.source import ToolSource, ToolSources

READ_NOTES = {"read": [{"path": "$home/notes", "reason": "Read the notes you name."}]}


def write_status_extension(folder: Path, name: str, tools: dict[str, dict], *,
                           version: str = "1.0.0", memories: dict[str, str] | None = None,
                           database: bool = False) -> Path:
    """An extension whose tools return their extension's name; ``tools`` maps a tool
    name to its permissions, ``memories`` a knowledge file or skill folder to its text."""
    files, shipped = {}, []
    for relative, text in (memories or {}).items():
        kind = "skill" if relative.startswith("skills/") else "knowledge"
        files[f"{relative}/SKILL.md" if kind == "skill" else relative] = text
        shipped.append({"kind": kind, "path": relative})
    return write_extension(folder, name, {tool: {"permissions": permissions}
                                          for tool, permissions in tools.items()},
                           version=version, files=files, database=database, memories=shipped)


def install(home: Home, folder: Path) -> None:
    with Store.open(home.db_path) as store:
        ExtensionManager(home, store, registry_url="http://127.0.0.1:9").install(
            str(folder), approve=lambda plan: True)


@pytest.fixture
def project(tmp_path: Path, home: Home) -> Path:
    """A home with a deliberate conflict and broken, held and untrusted-looking extensions.

    Installed: ``ext-a`` and ``ext-b`` both define ``shared_tool`` (ext-a wins by
    name); ``ext-broken`` whose manifest was then corrupted; ``ext-held`` whose code
    changed after approval. In the trusted project: ``ext-local`` (loads) and
    ``ext-local-bad`` (invalid manifest).
    """
    sources = tmp_path / "sources"
    install(home, write_status_extension(sources / "a", "ext-a", {"shared_tool": READ_NOTES, "only_a": {}},
                                  memories={"knowledge/guide.md": "# Guide\n\nHow to.\n",
                                            "skills/summing": "---\nname: summing\n"
                                            "description: Add numbers up.\n---\n# Sum\n"},
                                  database=True))
    install(home, write_status_extension(sources / "b", "ext-b", {"shared_tool": {}}, version="2.0.0"))
    install(home, write_status_extension(sources / "broken", "ext-broken", {"fine": {}}))
    install(home, write_status_extension(sources / "held", "ext-held", {"held_tool": {}}))
    (home.extensions_dir / "ext-broken" / "loca.json").write_text("{ not json")
    main = home.extensions_dir / "ext-held" / "main.py"
    main.write_text(main.read_text() + "# changed\n")

    root = tmp_path / "project"
    (root / ".workbench").mkdir(parents=True)
    (root / ".workbench" / "config.toml").write_text("")
    write_status_extension(root / ".workbench" / "extensions" / "ext-local", "ext-local", {"local_tool": {}})
    bad = write_status_extension(root / ".workbench" / "extensions" / "ext-local-bad", "ext-local-bad",
                          {"nope": {}})
    (bad / "loca.json").write_text(json.dumps({"name": "ext-local-bad"}))
    trust_project(home, root)
    with Store.open(home.db_path) as store:  # consent to ext-local's code, as it is
        ExtensionManager(home, store, registry_url="http://127.0.0.1:9").trust_project(
            root / ".workbench" / "extensions" / "ext-local")
    return root


def test_the_report_names_the_conflict_and_every_extension_that_did_not_load(project, home):
    with Host.open(cwd=project) as host:
        report = host.tools.status_report().to_json()
    ext = home.extensions_dir
    assert [e["name"] for e in report["extensions"]] == ["builtin", "ext-a", "ext-b", "ext-local"]
    a = report["extensions"][1]
    assert a == {
        "name": "ext-a", "version": "1.0.0", "source": "extension", "scope": "global",
        "source_path": str(ext / "ext-a"),
        "capabilities": {
            "tools": [{"name": "only_a", "description": "Do only_a.", "available": True},
                      {"name": "shared_tool", "description": "Do shared_tool.", "available": True}],
            "hooks": [],
            "knowledge": [{"title": "Guide", "path": "knowledge/guide.md"}],
            "skills": [{"title": "summing", "path": "skills/summing"}],
            "database": True,
            "permissions": [{"tool": "shared_tool", "kind": "read", "value": "$home/notes",
                             "reason": "Read the notes you name.", "optional": False}],
            "providers": []},
        "config_schema": None, "switched_off": False}
    b = report["extensions"][2]
    assert (b["version"], b["capabilities"]["tools"]) == (
        "2.0.0", [{"name": "shared_tool", "description": "Do shared_tool.", "available": False}])
    local = report["extensions"][3]
    assert (local["scope"], local["source_path"]) == (
        "project", str(project / ".workbench" / "extensions" / "ext-local"))

    errors = {e["extension"]: e for e in report["load_errors"]}
    assert set(errors) == {"ext-broken", "ext-held", "ext-local-bad"}
    assert errors["ext-broken"] == {
        "extension": "ext-broken", "source_path": str(ext / "ext-broken"), "state": "broken",
        "error_message": "invalid manifest: not valid JSON: Expecting property name enclosed in "
                         "double quotes (line 1, column 3)"}
    assert errors["ext-held"] == {
        "extension": "ext-held", "source_path": str(ext / "ext-held"), "state": "held",
        "error_message": "files changed since you approved it: main.py "
                         "(run `workbench ext trust ext-held`)"}
    assert errors["ext-local-bad"]["state"] == "broken"
    assert errors["ext-local-bad"]["error_message"].startswith("invalid: ")

    builtin = len(json.loads((BUILTIN_DIR / "loca.json").read_text())["tools"])
    assert report["tool_conflicts"] == {
        "conflicts": [{"tool_name": "shared_tool",
                       "winner": {"source": "extension", "extension": "ext-a"},
                       "shadowed": [{"source": "extension", "extension": "ext-b"}]}],
        # The built-in extension's tools, extensions_status, shell and the two bundle
        # tools; only_a, shared_tool and local_tool.
        "total_tools": builtin + 7, "builtin_count": builtin + 4, "extension_count": 3, "mcp_count": 0,
        "plugin_count": 0, "shadowed_count": 1}
    assert report["host_tools"] == ["extension_call", "extension_manage", "extensions_status", "shell"]
    assert (report["total_loaded"], report["total_errors"]) == (4, 3)
    assert report["tool_disclosure"]["active"] is False
    assert report["tool_disclosure"]["exposed"] == builtin + 7
    assert report["tool_disclosure"]["estimated_schema_tokens"] > 0
    assert report["session"] is None and report["disabled"] == [] and report["notices"] == []
    assert isinstance(report["built_at"], int) and report["built_at"] > 1_600_000_000_000


def test_an_untrusted_project_reports_its_extensions_as_untrusted(tmp_path, home):
    root = tmp_path / "untrusted"
    write_status_extension(root / ".workbench" / "extensions" / "ext-local", "ext-local", {"local_tool": {}})
    with Host.open(cwd=root) as host:
        report = host.tools.status_report()
    assert [(p.extension, p.state) for p in report.load_errors] == [("ext-local", "untrusted")]
    assert "not trusted" in report.load_errors[0].error_message
    assert "ext-local" not in [e.name for e in report.extensions]


def test_disabled_extensions_and_loading_off_are_reported(project, home):
    with Store.open(home.db_path) as store:
        store.set_extension_enabled("ext-b", False)
    with Host.open(cwd=project) as host:
        report = host.tools.status_report()
        assert report.disabled == ("ext-b",)
        assert report.conflicts == ()
        assert "- **Disabled:** ext-b" in report.to_markdown()
    (home.root / "config.toml").write_text("[extensions]\nenabled = false\n")
    with Host.open(cwd=project) as host:
        report = host.tools.status_report()
    assert [e.name for e in report.extensions] == []
    assert {p.extension for p in report.load_errors} == {"ext-broken", "ext-held", "ext-local-bad"}
    assert report.counts["total_tools"] == 4  # extensions_status, shell and the bundle tools
    assert any("extension loading is off" in notice for notice in report.notices)


# --- renderings -----------------------------------------------------------------------

def sample_report(**changes) -> StatusReport:
    entries = (
        ExtensionEntry(name="my-extension", version="1.0.0", source="extension", scope="global",
                       source_path="/ext/my-extension",
                       tools=({"name": "hello", "description": "Say hello.", "available": True},),
                       knowledge=({"title": "Guide", "path": "guide.md"},)),
        ExtensionEntry(name="another-ext", version="2.0.0", source="extension", scope="project",
                       source_path="/p/.workbench/extensions/another-ext"),
    )
    fields = dict(
        extensions=entries,
        load_errors=(LoadProblem("bad", "/ext/bad", "broken", "invalid manifest: /name: required"),),
        conflicts=({"tool_name": "hello", "winner": {"source": "extension", "extension": "my-extension"},
                    "shadowed": [{"source": "extension", "extension": "zz-ext"}]},),
        counts={"total_tools": 17, "builtin_count": 16, "extension_count": 1, "mcp_count": 0,
                "plugin_count": 0, "shadowed_count": 1},
        schema_tokens=1200, built_at=1706715000000)
    fields.update(changes)
    return StatusReport(**fields)


def test_markdown_follows_the_seed_layout():
    assert sample_report().to_markdown() == """\
# Extension Status Report

- **Extensions loaded:** 2
- **Load errors:** 1
- **Loaded at:** 2024-01-31 15:30:00 UTC

## Loaded Extensions
- **my-extension** v1.0.0 (tools, knowledge)
- **another-ext** v2.0.0

## Load Errors
- `/ext/bad`
  - broken: invalid manifest: /name: required

## Tool Registry
- **Total tools:** 17
- **Built-in:** 16
- **From extensions:** 1
- **From MCP:** 0
- **From plugins:** 0
- **Shadowed:** 1

### Conflicts
- `hello`: **my-extension** (extension) wins; shadowed: zz-ext (extension)

## Tool Disclosure
- **Active:** false (inactive)
- **Estimated schema tokens:** 1200
"""


def test_markdown_details_reload_and_session_switches():
    report = sample_report(session=SessionContext("s1", True, ("another-ext",)),
                           extensions=(sample_report().extensions[0],
                                       ExtensionEntry(name="another-ext", version="", source="extension",
                                                      scope="project", source_path="/p/x",
                                                      switched_off=True)))
    text = report.to_markdown(details=True, reloaded=True)
    assert text.startswith("# Extensions Reloaded\n\n- **Extensions loaded:** 2\n- **Load errors:** 1\n"
                           "- **Reloaded at:** 2024-01-31 15:30:00 UTC\n"
                           "- **Switched off in this chat:** another-ext\n")
    assert ("- **my-extension** v1.0.0 (tools, knowledge)\n"
            "  - Source: `/ext/my-extension` (extension, global)\n"
            "  - Tools: hello\n"
            "  - Config schema: none\n"
            "- **another-ext** — switched off in this chat\n"
            "  - Source: `/p/x` (extension, project)\n"
            "  - Tools: none\n") in text
    assert "Loaded at" not in text


def test_titles_say_when_there_is_no_session():
    assert sample_report().title() == "2 loaded, 1 errors, 1 conflicts (no session context)"
    assert sample_report(session=SessionContext("x", False)).title() == \
        "2 loaded, 1 errors, 1 conflicts (session not found)"
    assert sample_report(session=SessionContext("x", True), load_errors=(), conflicts=()).title(
        reloaded=True) == "Reloaded: 2 loaded"


def test_text_lists_versions_tool_counts_errors_conflicts_and_counts():
    text = sample_report().to_text()
    assert text.splitlines()[:3] == ["Extensions loaded: 2",
                                     "  my-extension  1.0.0       1 tool",
                                     "  another-ext   2.0.0       0 tools  (project)"]
    assert "  bad  broken  /ext/bad\n    invalid manifest: /name: required" in text
    assert "  hello: my-extension (extension) wins; shadowed: zz-ext (extension)" in text
    assert "Tools offered: 17 (builtin 16, extension 1, mcp 0, plugin 0); shadowed: 1" in text
    detailed = sample_report().to_text(details=True)
    assert "      tool hello — Say hello." in detailed
    assert "      knowledge Guide (guide.md)" in detailed


# --- the extensions_status tool ----------------------------------------------------------

async def test_status_through_the_gateway(project):
    with Host.open(cwd=project) as host:
        seen = []
        host.bus.subscribe(seen.append)
        outcome = await host.tools.call("extensions_status", {})
        assert outcome.ok, outcome.error
        assert outcome.tool == "workbench.extensions_status"
        assert outcome.result["title"] == "4 loaded, 3 errors, 1 conflicts (no session context)"
        markdown = outcome.result["markdown"]
        assert markdown.startswith("# Extension Status Report\n")
        assert "- **ext-b** v2.0.0 (tools)" in markdown
        assert "- `shared_tool`: **ext-a** (extension) wins; shadowed: ext-b (extension)" in markdown
        assert f"- `{host.home.extensions_dir / 'ext-held'}`\n  - held: files changed" in markdown
        assert "  - Source:" not in markdown
        detailed = await host.tools.call("extensions_status", {"include_details": True})
        assert "  - Tools: only_a, shared_tool" in detailed.result["markdown"]
        assert [type(e) for e in seen if isinstance(e, (ToolCallStarted, ToolCallEnded))] == \
            [ToolCallStarted, ToolCallEnded] * 2
        audit = host.store._all("SELECT action, subject FROM audit_log WHERE subject = ?",
                                ("workbench.extensions_status",))
        assert [row["action"] for row in audit] == ["tool.call", "tool.ok"] * 2


async def test_bad_arguments_are_refused_by_the_gateway(project):
    with Host.open(cwd=project) as host:
        outcome = await host.tools.call("extensions_status", {"action": "explode"})
        assert not outcome.ok and outcome.error["kind"] == "invalid_arguments"


async def test_reload_rebuilds_the_registry_and_publishes_the_new_report(project, home, tmp_path):
    with Host.open(cwd=project) as host:
        session = host.chats.new()["id"]
        seen = []
        host.bus.subscribe(seen.append)
        host.extensions.manager().install(str(write_status_extension(tmp_path / "sources" / "c", "ext-c", {"c_tool": {}})),
                             approve=lambda plan: True)
        before = host.loading.loaded_at
        outcome = await host.tools.call("extensions_status", {"action": "reload"},
                                       CallOptions(session_id=session))
        assert outcome.ok, outcome.error
        assert outcome.result["title"] == "Reloaded: 5 loaded, 3 errors, 1 conflicts"
        markdown = outcome.result["markdown"]
        assert markdown.startswith("# Extensions Reloaded\n")
        assert "- **Reloaded at:** " in markdown and "- **ext-c** v1.0.0 (tools)" in markdown
        assert host.registry.resolve("c_tool").extension == "ext-c"
        assert host.registry.resolve("extensions_status").runtime == HOST_RUNTIME
        assert host.loading.loaded_at >= before
        changed = [e for e in seen if isinstance(e, ExtensionStatusChanged)]
        assert len(changed) == 1 and changed[0].reloaded
        assert "ext-c" in [e["name"] for e in changed[0].report["extensions"]]
        assert changed[0].report["session"] is None
        assert changed[0].to_json()["type"] == "extension_status_changed"


async def test_reload_needs_a_session(project):
    with Host.open(cwd=project) as host:
        outcome = await host.tools.call("extensions_status", {"action": "reload"})
        assert outcome.error["kind"] == "unavailable"
        assert "reload needs a chat session" in outcome.error["message"]
        assert "(no session context)" in outcome.error["message"]


async def test_reload_is_refused_while_a_turn_is_streaming(project, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"id": "c1", "name": "extensions_status", "arguments": {"action": "reload"}}]},
        {"text": "Could not reload."},
    ]))
    with Host.open(cwd=project, model=f"scripted:{script}") as host:
        seen = []
        host.bus.subscribe(seen.append)
        result = await host.chats.send_prompt("reload the extensions")
        assert result.text == "Could not reload."
        tool_row = host.chats.messages(result.session_id)[2]
        assert json.loads(tool_row["content"]) == {
            "ok": False, "error": {"kind": "unavailable", "message": RELOAD_WHILE_STREAMING}}
        assert not [e for e in seen if isinstance(e, ExtensionStatusChanged)]


async def test_the_report_of_a_chat_marks_what_it_switched_off(project):
    with Host.open(cwd=project) as host:
        session = host.chats.new()["id"]
        host.switches.set_extension(session, "ext-b", False)
        outcome = await host.tools.call("extensions_status", {}, CallOptions(session_id=session))
        assert outcome.result["title"] == "4 loaded, 3 errors, 1 conflicts"
        assert "- **ext-b** v2.0.0 (tools) — switched off in this chat" in outcome.result["markdown"]
        report = host.tools.status_report(session[:8]).to_json()
        assert report["session"] == {"id": session, "found": True, "switched_off": ["ext-b"],
                                     "tools_off": []}
        assert host.tools.status_report("0" * 32).session == SessionContext("0" * 32, False)


async def test_the_report_of_a_chat_counts_its_single_tool_switches(project):
    with Host.open(cwd=project) as host:
        session = host.chats.new()["id"]
        whole = host.tools.status_report(session)
        tool = next(t for t in host.switches.tools(session) if t.source == "extension")
        host.switches.set_tool(session, tool.name, False)
        report = host.tools.status_report(session)
        assert report.session.tools_off == (tool.qualified_name,)
        assert f"- **Tools switched off in this chat:** {tool.qualified_name}" in report.to_markdown()
        # What the chat's model would be offered shrinks by that tool's schema.
        assert report.schema_tokens < whole.schema_tokens
        assert host.tools.status_report().schema_tokens == whole.schema_tokens


# --- host-native tools in the dispatcher ----------------------------------------------------

class NoSandbox(ToolSource):
    """The sandboxed source, which must not be asked: host-native tools never reach it."""

    name = "extensions"

    def tools(self) -> list[Tool]:
        return []

    async def call(self, tool, arguments, ctx, *, timeout_ms):
        raise AssertionError("the sandbox was consulted for a host-native tool")


def dispatcher() -> Dispatcher:
    sources = ToolSources(ToolRegistry(), fallback="extensions")
    sources.register(NoSandbox())
    return Dispatcher(sources)


def bare_context() -> ToolContext:
    async def ask(questions):
        raise AssertionError("no form is asked here")

    return ToolContext(sink=lambda kind, data: None, asker=ask)


def host_tool(handler) -> Tool:
    return Tool(name="probe", description="Probe.", parameters={"type": "object"},
                extension="workbench", source="builtin", function="probe", folder=Path("."),
                entry=None, runtime=HOST_RUNTIME, handler=handler)


async def test_the_dispatcher_awaits_a_host_tool_in_process_before_any_sandbox_check():
    calls = []

    async def handler(arguments, ctx):
        calls.append((arguments, ctx))
        return {"ran": True}

    ctx = bare_context()
    run = dispatcher()
    assert await run(host_tool(handler), {"x": 1}, ctx) == {"ran": True}
    assert calls == [({"x": 1}, ctx)]


async def test_a_host_tool_without_a_handler_is_unavailable():
    from workbench.errors import ToolError

    with pytest.raises(ToolError) as caught:
        await dispatcher()(host_tool(None), {}, bare_context())
    assert caught.value.kind == "unavailable"


def test_host_tools_are_builtin_tools_of_workbench(project):
    with Host.open(cwd=project) as host:
        (tool,) = host_tools(chats=host.chats, store=host.store, loading=host.loading, tools=host.tools)
        assert (tool.name, tool.extension, tool.source, tool.runtime) == (
            "extensions_status", "workbench", "builtin", HOST_RUNTIME)
        assert tool.parameters["properties"]["action"]["enum"] == ["status", "reload"]
        host.loading.reload()
        assert host.registry.resolve("workbench.extensions_status").handler is not None


def test_the_load_record_remembers_and_passes_the_rest_through(home):
    class Manager:
        repairs = ["kept"]

        def list(self):
            return ["listed"]

        def discover(self, project_dir):
            return [project_dir]

    record = LoadRecord(Manager())
    assert record.list() == ["listed"] and record.installed == ["listed"]
    assert record.discover(Path("/p")) == [Path("/p")] and record.discovered == [Path("/p")]
    assert record.repairs == ["kept"]
