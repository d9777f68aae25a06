"""Where this machine cannot sandbox, tools are refused — unless the person (in their own
config, never a project's or a model's) allowed a tool to run without one."""

from __future__ import annotations

from workbench.config.trust import trust_project
from workbench.core.host import Host
from workbench.events import ToolCallLog

MISSING = {"ready": False, "checks": [
    {"name": "landlock", "ok": False, "detail": "the kernel has no Landlock", "required": True}]}


async def test_refused_when_the_sandbox_is_missing(workdir):
    async with Host.open(cwd=workdir) as host:
        host.sandbox._report = MISSING
        outcome = await host.call_tool("word_count", {"text": "a b"})
        assert outcome.error["kind"] == "unavailable"
        assert "landlock: the kernel has no Landlock" in outcome.error["message"]
        assert "workbench doctor" in outcome.error["message"]


async def test_the_persons_own_opt_in_runs_that_tool_alone_and_says_so(workdir, home):
    home.config_file.write_text('[sandbox]\nunsandboxed_tools = ["builtin.word_count"]\n')
    async with Host.open(cwd=workdir) as host:
        host.sandbox._report = MISSING
        seen = []
        host.bus.subscribe(seen.append)
        outcome = await host.call_tool("word_count", {"text": "a b"})
        assert outcome.ok and outcome.result["words"] == 2
        warnings = [e.message for e in seen if isinstance(e, ToolCallLog) and e.level == "warn"]
        assert any("WITHOUT a sandbox" in w for w in warnings)
        other = await host.call_tool("current_time", {})
        assert other.error["kind"] == "unavailable"


async def test_a_project_config_cannot_opt_a_tool_out(workdir, home):
    project = workdir / ".workbench"
    project.mkdir()
    (project / "config.toml").write_text('[sandbox]\nunsandboxed_tools = ["builtin.word_count"]\n')
    trust_project(home, workdir)
    async with Host.open(cwd=workdir) as host:
        assert host.config.get("sandbox.unsandboxed_tools") == ["builtin.word_count"]
        host.sandbox._report = MISSING
        outcome = await host.call_tool("word_count", {"text": "a b"})
        assert outcome.error["kind"] == "unavailable"
