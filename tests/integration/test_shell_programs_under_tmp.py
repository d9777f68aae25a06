"""A program folder given to the shell may lie beneath ``/tmp`` (a virtual environment
made there, as a clone under /tmp has): the command's private ``/tmp`` does not hide it,
it stays read-only, and the command's own ``/tmp`` is still its own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shells import python_programs


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    folder = tmp_path / "venv"  # a program folder: its bin/ is on the command's PATH
    (folder / "bin").mkdir(parents=True)
    program = folder / "bin" / "hello-from-tmp"
    program.write_text("#!/bin/sh\necho \"hello from $0\"\n")
    program.chmod(0o755)
    assert str(folder).startswith("/tmp/"), "the test needs a folder beneath /tmp"
    return folder


@pytest.fixture
def shell_config(tools: Path) -> str:
    programs = python_programs()[:-1] + f', "{tools}"]'
    return f"[shell]\nprograms = {programs}\n"


async def test_a_program_folder_beneath_tmp_is_seen_read_only(shell_lab, tools: Path) -> None:
    ran = await shell_lab.run("hello-from-tmp")
    assert ran["exit_code"] == 0 and "hello from" in ran["output"], ran["output"]
    marker = f"wb-private-{os.getpid()}"
    wrote = await shell_lab.run(f"echo changed > {tools}/bin/hello-from-tmp; echo $? ; "
                                f"echo kept > /tmp/{marker} && cat /tmp/{marker}")
    assert wrote["output"].splitlines()[-1] == "kept", wrote
    assert (tools / "bin" / "hello-from-tmp").read_text().startswith("#!/bin/sh\necho"), "the program was changed"
    assert not os.path.exists(f"/tmp/{marker}"), "the command's /tmp reached the host's"
