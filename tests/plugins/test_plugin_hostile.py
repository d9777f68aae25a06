"""Hostile plugins: one that hangs, crashes, floods, answers garbage, asks for what it
was not approved for, and tries to reach the network or files outside its grants — each
contained and reported as an error result, the workbench still serving the next call."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from plugin_folders import hostile_plugin, trusted_project
from workbench.core.plugin_service import PluginService, open_plugins
from workbench.errors import ToolError
from workbench.plugins.api import Caller, PluginApi
from workbench.plugins.http import request

pytestmark = [pytest.mark.security, pytest.mark.slow]


@pytest.fixture
async def hostile(home, tmp_path: Path, workdir: Path):
    project = trusted_project(home, workdir, "hostile")
    (project / "notes.txt").write_text("the project's notes", encoding="utf-8")
    service = open_plugins(project)
    await service.install(service.plan(hostile_plugin(tmp_path / "hostile")))
    service.tool_timeout_s = 1.0
    try:
        yield service
    finally:
        await service.aclose()


async def error_of(service: PluginService, tool: str, arguments: dict | None = None) -> ToolError:
    with pytest.raises(ToolError) as caught:
        await service.call_tool("hostile", tool, arguments or {})
    return caught.value


async def fine(service: PluginService) -> None:
    assert (await service.call_tool("hostile", "ok", {}))["content"][0]["text"] == "fine"


async def test_bad_answers_become_error_results(hostile: PluginService) -> None:
    await fine(hostile)
    flood = await error_of(hostile, "flood")
    assert flood.kind == "tool" and "at most 1048576" in flood.message
    garbage = await error_of(hostile, "garbage")
    assert "not a tool result" in garbage.message
    mismatch = await error_of(hostile, "mismatch")
    assert "does not match its output_schema" in mismatch.message and mismatch.extra["isError"] is True
    failed = await error_of(hostile, "fails")
    assert failed.message == "it went wrong"
    await fine(hostile)


async def test_a_hang_and_a_crash_are_unanswered_calls(hostile: PluginService) -> None:
    await fine(hostile)
    hang = await error_of(hostile, "hang")
    assert hang.kind == "unavailable" and "no answer within 1 s" in hang.message
    crash = await error_of(hostile, "crash")
    assert crash.kind == "unavailable" and "closed before an answer" in crash.message
    await fine(hostile)  # started again on this need; the breaker counted two, then closed
    instance = next(iter(hostile.instances.values()))
    assert instance.breaker.state == "closed" and instance.breaker.unanswered == 0


async def test_its_memory_is_bounded_by_its_manifest(hostile: PluginService) -> None:
    hog = await error_of(hostile, "hog")  # 512 MiB asked for, 96 MiB given
    assert hog.kind == "unavailable" and "closed before an answer" in hog.message, hog.message
    log = next(iter(hostile.instances.values())).paths.log.read_text()
    assert "went over the memory limit (96 MiB" in log and "Traceback" not in log
    await fine(hostile)  # the workbench goes on, and so does the plugin, started again


async def test_the_gate_no_program_no_unix_socket_and_an_audit_log(hostile: PluginService, workdir: Path) -> None:
    with socket.socket(socket.AF_UNIX) as listener:  # a socket in the project, which it may read
        listener.bind(str(workdir / "agent.sock"))
        listener.listen(1)
        found = (await hostile.call_tool("hostile", "escape", {"socket": str(workdir / "agent.sock")}))[
            "structuredContent"]
    assert found["exec"].startswith("refused:") and found["unix"].startswith("refused:"), found
    [log] = (hostile.store.get("hostile").root / "audit").glob("*/*.jsonl")
    start = json.loads(log.read_text().splitlines()[-1])
    assert start["event"] == "start" and start["memory_mb"] == 96
    enforced = {tuple(r.get("paths") or r.get("commands")): r["enforced"] for r in start["rules"]}
    assert enforced[("/data/cache/**",)].startswith("not enforced")
    assert enforced[("/etc/**",)].startswith("not granted")
    assert enforced[("curl", "wget")] == "no program runs in the sandbox at all"
    assert not any(g.startswith("read:/etc") for g in start["grants"])


def test_gate_rules_that_cover_a_whole_folder_narrow_the_grants() -> None:
    from workbench.plugins.gate import apply

    narrowed = apply({"files": [{"paths": ["/data/**"], "operations": ["write", "delete"], "decision": "deny"},
                                {"paths": ["/project/**"], "operations": ["read"], "decision": "deny"}]})
    assert (narrowed.data_writable, narrowed.project_readable) == (False, False)
    assert apply(None).data_writable and apply({}).project_readable


async def test_no_network_but_the_plugin_api(hostile: PluginService) -> None:
    with socket.create_server(("127.0.0.1", 0)) as host_service:
        host_service.settimeout(0)
        port = host_service.getsockname()[1]
        found = (await hostile.call_tool("hostile", "net", {"port": port}))["structuredContent"]
        with pytest.raises(BlockingIOError):
            host_service.accept()  # nothing of the plugin's reached it
    assert found["proxied_host_port"].startswith("refused: HTTPError: HTTP Error 403")
    assert found["direct_host_port"].startswith("refused:")
    assert found["outside"].startswith("refused:")
    assert found["bind_other"].startswith("refused: PermissionError")  # its own port alone
    assert found["bind_any"].startswith("refused: PermissionError")
    channel = (await hostile.call_tool("hostile", "channel", {}))["structuredContent"]
    assert channel["plugin"] == "hostile" and channel["settings"] == {"level": 2}


async def test_no_files_but_its_grants(hostile: PluginService, tmp_path: Path, workdir: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("private", encoding="utf-8")
    found = (await hostile.call_tool("hostile", "files", {"outside": str(outside)}))["structuredContent"]
    assert found["read_outside"].startswith("refused:")
    assert found["write_project"].startswith("refused:") and not (workdir / "planted.txt").exists()
    assert found["read_project"] == "ok: the project's notes"
    assert found["write_data"] == "ok: 1"


async def test_an_unapproved_capability_answers_403(hostile: PluginService) -> None:
    assert (await hostile.call_tool("hostile", "notify", {}))["content"][0]["text"] == "status 403"
    assert hostile.notifications == []


async def test_the_plugin_api_refuses_strangers_and_disabled_projects() -> None:
    enabled = {"now": True}
    caller = Caller("echo", "/p", ("notifications",), enabled=lambda: enabled["now"], settings=lambda: {"n": 1})
    api = PluginApi(callers=lambda token: caller if token == "good" else None)
    await api.start()
    try:
        get = lambda token, path="/api/plugin/v1/channel": request(  # noqa: E731
            "127.0.0.1", api.port, "GET", path, token=token, timeout=5, max_bytes=65536)
        assert (await get("bad")).status == 401
        answer = await get("good")
        assert answer.status == 200 and answer.json()["settings"] == {"n": 1}
        assert (await get("good", "/api/plugin/v1/nothing")).status == 404
        enabled["now"] = False
        assert (await get("good")).status == 409
    finally:
        api.close()


async def test_a_plugin_that_never_answers_health_is_stopped(home, tmp_path: Path, workdir: Path) -> None:
    project = trusted_project(home, workdir, "hostile")
    folder = hostile_plugin(tmp_path / "hostile")
    (folder / "server.py").write_text("import time\nprint('never serving', flush=True)\ntime.sleep(3600)\n")
    service = open_plugins(project)
    await service.install(service.plan(folder))
    import workbench.plugins.runtime as runtime

    before, runtime.START_TIMEOUT_S = runtime.START_TIMEOUT_S, 1.0
    try:
        error = await error_of(service, "ok")
        assert "did not answer /healthz" in error.message
        instance = next(iter(service.instances.values()))
        assert instance.process is not None and instance.process.poll() is not None
    finally:
        runtime.START_TIMEOUT_S = before
        await service.aclose()
