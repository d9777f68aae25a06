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
        outcome = await host.tools.call("word_count", {"text": "a b"})
        assert outcome.error["kind"] == "unavailable"
        assert "landlock: the kernel has no Landlock" in outcome.error["message"]
        assert "workbench doctor" in outcome.error["message"]


async def test_the_persons_own_opt_in_runs_that_tool_alone_and_says_so(workdir, home):
    home.config_file.write_text('[sandbox]\nunsandboxed_tools = ["builtin.word_count"]\n')
    async with Host.open(cwd=workdir) as host:
        host.sandbox._report = MISSING
        seen = []
        host.bus.subscribe(seen.append)
        outcome = await host.tools.call("word_count", {"text": "a b"})
        assert outcome.ok and outcome.result["words"] == 2
        warnings = [e.message for e in seen if isinstance(e, ToolCallLog) and e.level == "warn"]
        assert any("WITHOUT a sandbox" in w for w in warnings)
        other = await host.tools.call("current_time", {})
        assert other.error["kind"] == "unavailable"


async def test_a_project_config_cannot_opt_a_tool_out(workdir, home):
    project = workdir / ".workbench"
    project.mkdir()
    (project / "config.toml").write_text('[sandbox]\nunsandboxed_tools = ["builtin.word_count"]\n')
    trust_project(home, workdir)
    async with Host.open(cwd=workdir) as host:
        assert host.config.get("sandbox.unsandboxed_tools") == ["builtin.word_count"]
        host.sandbox._report = MISSING
        outcome = await host.tools.call("word_count", {"text": "a b"})
        assert outcome.error["kind"] == "unavailable"


class Grants:
    """Answers each permission request once, and remembers what was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def answer(self, request):
        from workbench.events import PermissionAnswer

        self.asked += [f"{p['kind']} {p['value']}".strip() for p in request.permissions]
        return PermissionAnswer("once")


async def test_an_unsandboxed_tool_gets_the_whole_ctx_through_the_same_checks(workdir, home):
    """The private database, memories behind their permission, progress and refusals:
    the same ctx and the same host-side checks as in a worker."""
    from workbench.core.gateway import CallOptions

    home.config_file.write_text(
        '[extensions]\nsamples = true\n[sandbox]\nunsandboxed_tools = '
        '["samples.sample_database", "samples.sample_memory"]\n')
    person = Grants()
    async with Host.open(cwd=workdir, responder=person) as host:
        host.sandbox._report = MISSING
        seen = []
        host.bus.subscribe(seen.append)
        first = await host.tools.call("sample_database", {"note": "water the ferns"})
        second = await host.tools.call("sample_database", {"note": "repot"})
        assert first.ok and second.ok, (first.error, second.error)
        assert (second.result["count"], second.result["latest"]) == (2, ["repot", "water the ferns"])
        assert host.databases.query("samples", "SELECT body FROM notes ORDER BY id") == [
            {"body": "water the ferns"}, {"body": "repot"}]
        progress = [e.progress for e in seen if getattr(e, "call_id", None) == second.call_id
                    and type(e).__name__ == "ToolCallProgress"]
        assert progress == [0.5, 1.0]

        # Memories: refused without the permission, as in a worker...
        refused = await host.tools.call("sample_memory", {"action": "write", "title": "Ferns",
                                                         "content": "Damp soil."},
                                       CallOptions(prompt=False))
        assert refused.error["kind"] == "permission", refused.error
        assert host.store.get_memory("Ferns") is None
        # ...and asked for, then granted once, when the call may prompt.
        written = await host.tools.call("sample_memory", {"action": "write", "title": "Ferns",
                                                         "content": "Damp soil."})
        assert written.ok, written.error
        assert person.asked == ["memories write"]
        assert host.store.get_memory("Ferns")["content"] == "Damp soil."


async def test_cancelling_an_unsandboxed_call_closes_its_open_form(workdir, home):
    import asyncio

    from workbench.events import AskUserRequest, ToolCallStarted

    home.config_file.write_text('[extensions]\nsamples = true\n[sandbox]\n'
                                'unsandboxed_tools = ["samples.sample_choice"]\n')
    asked, closed = asyncio.Event(), asyncio.Event()

    class Waits:
        async def answer(self, request):
            assert isinstance(request, AskUserRequest)
            asked.set()
            try:
                await asyncio.Event().wait()  # nobody answers
            finally:
                closed.set()

    async with Host.open(cwd=workdir, responder=Waits()) as host:
        host.sandbox._report = MISSING
        started = []
        host.bus.subscribe(lambda e: started.append(e) if isinstance(e, ToolCallStarted) else None)
        call = asyncio.ensure_future(host.tools.call("sample_choice", {}))
        await asyncio.wait_for(asked.wait(), 10)
        assert host.chats.cancel_call(started[0].call_id)
        outcome = await asyncio.wait_for(call, 10)
        assert outcome.error["kind"] == "cancelled"
        await asyncio.wait_for(closed.wait(), 5)
