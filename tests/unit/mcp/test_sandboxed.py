"""The policy of a sandboxed stdio server: what it runs, reads and sees, from grants alone."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from workbench.mcp.config import ServerConfig
from workbench.mcp.sandboxed import GrantChanged, SandboxSetupError, build_policy, prepare, read_pins
from workbench.sandbox.policy import Limits


def script(folder: Path, shebang: str) -> Path:
    path = folder / "venv" / "bin" / "my-server"
    path.parent.mkdir(parents=True)
    path.write_text(f"#!{shebang}\nprint('hi')\n")
    path.chmod(0o755)
    return path


def test_the_command_and_its_interpreter_may_run_and_their_folders_be_read(tmp_path: Path) -> None:
    server_script = script(tmp_path, sys.executable)
    argv, policy = build_policy(ServerConfig(name="s", command=str(server_script), args=("--x",)),
                                cwd=tmp_path, env={"PATH": "/usr/bin"}, limits=Limits())
    assert argv == [str(server_script), "--x"]
    python = os.path.realpath(sys.executable)
    assert str(server_script) in policy.runtime_execute and python in policy.runtime_execute
    assert str(tmp_path / "venv") in policy.runtime_read
    assert os.path.dirname(os.path.dirname(python)) in policy.runtime_read
    assert "/etc/ssl" in policy.runtime_read
    assert policy.read == [] and policy.write == [] and policy.net == [] and not policy.allow_processes


def test_an_env_shebang_is_followed_on_path(tmp_path: Path) -> None:
    bin_dir = Path(sys.executable).parent
    server_script = script(tmp_path, f"/usr/bin/env -S {Path(sys.executable).name}")
    _, policy = build_policy(ServerConfig(name="s", command=str(server_script)), cwd=tmp_path,
                             env={"PATH": str(bin_dir)}, limits=Limits())
    assert "/usr/bin/env" in policy.runtime_execute
    assert str(bin_dir / Path(sys.executable).name) in policy.runtime_execute


def test_grants_become_the_policy_and_nothing_else_does(tmp_path: Path) -> None:
    server = ServerConfig(name="s", command=sys.executable, env={"OWN": "1"}, sandbox=True,
                          grants=("read:/data", "write:/tmp/out", "env:GRANTED", "net:api.example.com:443,8443",
                                  "run:sh"))
    _, policy = build_policy(server, cwd=tmp_path, limits=Limits(),
                             env={"PATH": "/usr/bin:/bin", "GRANTED": "yes", "SECRET_KEY": "no"})
    assert policy.read == ["/data"] and policy.write == ["/tmp/out"]
    assert policy.env == {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(tmp_path),
                          "GRANTED": "yes", "OWN": "1"}
    assert [(e.host, e.ports) for e in policy.net] == [("api.example.com", [443, 8443])]
    assert policy.allow_processes and policy.execute[0].endswith("/sh")


def test_a_command_or_binary_not_found_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(SandboxSetupError, match="was not found"):
        build_policy(ServerConfig(name="s", command="no-such-program-here"), cwd=tmp_path, env={},
                     limits=Limits())
    with pytest.raises(SandboxSetupError, match="granted binary"):
        build_policy(ServerConfig(name="s", command=sys.executable, grants=("run:no-such-binary",)),
                     cwd=tmp_path, env={"PATH": "/usr/bin"}, limits=Limits())
    with pytest.raises(SandboxSetupError, match="net:HOST:PORT"):
        build_policy(ServerConfig(name="s", command=sys.executable, grants=("net:example.com",)),
                     cwd=tmp_path, env={}, limits=Limits())


def test_the_spec_reaches_the_launcher_through_a_pipe_never_the_command_line(tmp_path: Path) -> None:
    launch = prepare(ServerConfig(name="s", command=sys.executable, env={"TOKEN": "secret"},
                                  grants=("net:h:1",)), cwd=tmp_path, env={}, limits=Limits())
    try:
        assert launch.argv[:4] == [sys.executable, "-I", "-m", "workbench.mcp.launcher"]
        assert "secret" not in " ".join(launch.argv)
        assert launch.control is not None and len(launch.pass_fds) == 2
        assert b"secret" in os.read(launch.pass_fds[0], 65536)
    finally:
        launch.started()
        if launch.control is not None:
            launch.control.close()
    with pytest.raises(OSError):
        os.fstat(launch.pass_fds[0])


def test_a_program_of_the_system_brings_itself_never_the_whole_prefix(tmp_path: Path) -> None:
    node = "/usr/bin/node"
    assert os.path.exists(node), "node is needed by the MCP test servers"
    _, policy = build_policy(ServerConfig(name="s", command=node), cwd=tmp_path, env={"PATH": "/usr/bin"},
                             limits=Limits())
    assert node in policy.runtime_execute
    assert "/usr" not in policy.runtime_read and policy.extension_dir != "/usr"
    assert all(p.startswith(("/usr/lib/", "/usr/share/", "/etc/")) for p in policy.runtime_read), \
        policy.runtime_read


def test_granted_paths_are_pinned_at_the_first_start_and_a_swap_is_refused(tmp_path: Path) -> None:
    granted, other = tmp_path / "granted", tmp_path / "other"
    granted.mkdir()
    other.mkdir()
    pins_file = tmp_path / "pins" / "s.json"
    server = ServerConfig(name="s", command=sys.executable, grants=(f"read:{granted}", f"write:{other}"))
    first = prepare(server, cwd=tmp_path, env={}, limits=Limits(), pins_file=pins_file)
    first.started()
    pins = read_pins(pins_file)
    assert set(pins) == {f"read:{granted}", f"write:{other}"}
    assert first.policy.pins[str(granted)] == [granted.stat().st_dev, granted.stat().st_ino]
    granted.rmdir()
    granted.symlink_to(other)
    with pytest.raises(GrantChanged) as refused:
        prepare(server, cwd=tmp_path, env={}, limits=Limits(), pins_file=pins_file)
    assert str(granted) in str(refused.value) and str(pins_file) in str(refused.value)
    assert read_pins(pins_file) == pins  # a refusal keeps what was granted


def test_unreadable_pins_are_none(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "odd.json").write_text('{"read:/x": 3}')
    assert read_pins(tmp_path / "bad.json") == {} and read_pins(tmp_path / "odd.json") == {}
    assert read_pins(tmp_path / "missing.json") == {}
