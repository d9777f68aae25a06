"""``run`` grants in the policy: alternatives for other systems are left out, a script's
interpreter may execute without becoming a grant, and the worker's PATH is the granted
binaries' folders."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from workbench.permissions.policy import build_policy
from workbench.permissions.requirements import Requirement, on_this_system
from workbench.sandbox.policy import PROGRAM_READ, Limits


def script(path: Path, first_line: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{first_line}\necho hi\n")
    path.chmod(0o755)
    return path


def policy_for(tmp_path: Path, runtime: str, granted: list[Requirement], env: dict):
    entry = tmp_path / ("index.ts" if runtime == "deno" else "main.py")
    entry.write_text("")
    return build_policy(runtime=runtime, entry=entry, function="f", extension_dir=tmp_path,
                        granted=granted, cwd=tmp_path, limits=Limits(), deno_dir=tmp_path / "deps",
                        tool="t", env=env)


def run(binary: str) -> Requirement:
    return Requirement("run", binary, "r")


@pytest.mark.parametrize("runtime", ["python", "deno"])
def test_alternatives_scripts_and_path(tmp_path: Path, runtime: str) -> None:
    bin_dir = tmp_path / "bin"
    opener = script(bin_dir / "xdg-open", "#!/bin/sh")
    tool = script(tmp_path / "tools" / "fern-tool", "#!/usr/bin/env sh")
    # The system's own folders may hold an ``open`` (Debian's alternative, once xdg-utils
    # is installed): the PATH's last folder holds only the ``sh`` the tool's ``env`` runs.
    system = tmp_path / "system"
    system.mkdir()
    (system / "sh").symlink_to(shutil.which("sh") or "/bin/sh")
    env = {"PATH": f"{bin_dir}:{tmp_path / 'tools'}:{system}"}
    policy = policy_for(tmp_path, runtime,
                        [run("open"), run("xdg-open"), run("rundll32"), run("fern-tool")], env)
    assert policy.execute == [str(opener), str(tool)]
    assert {"/bin/sh", "/usr/bin/env"} <= set(policy.runtime_execute)
    assert "/bin/sh" not in policy.execute and "/usr/bin/env" not in policy.execute
    env_sh = os.path.dirname(shutil.which("sh", path=env["PATH"]))
    assert policy.env["PATH"] == os.pathsep.join(dict.fromkeys(
        [str(bin_dir), str(tmp_path / "tools"), env_sh]))
    assert set(PROGRAM_READ) <= set(policy.runtime_read)
    if runtime == "deno":
        [allow_run] = [flag for flag in policy.deno["argv"] if flag.startswith("--allow-run")]
        assert allow_run == f"--allow-run={opener},{tool}"


def test_nothing_to_run_gives_no_path_and_no_program_files(tmp_path: Path) -> None:
    policy = policy_for(tmp_path, "python", [run("open"), run("rundll32")],
                        {"PATH": str(tmp_path / "empty")})
    assert policy.execute == [] and "PATH" not in policy.env
    assert not policy.allow_processes
    assert not set(PROGRAM_READ) & set(policy.runtime_read)


def test_a_granted_path_variable_is_the_hosts(tmp_path: Path) -> None:
    opener = script(tmp_path / "bin" / "xdg-open", "#!/bin/sh")
    env = {"PATH": f"{opener.parent}:/usr/bin"}
    policy = policy_for(tmp_path, "python", [run("xdg-open"), Requirement("env", "PATH", "r")], env)
    assert policy.env["PATH"] == env["PATH"]


def test_on_this_system(tmp_path: Path) -> None:
    script(tmp_path / "xdg-open", "#!/bin/sh")
    assert on_this_system(run("xdg-open"), str(tmp_path))
    assert not on_this_system(run("open"), str(tmp_path))
    assert not on_this_system(run(str(tmp_path / "rundll32")), str(tmp_path))
    assert on_this_system(Requirement("read", "/nowhere", "r"), str(tmp_path))
