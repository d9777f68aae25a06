"""The stdio transport: how a server's end is told, and its whole process group stopped."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from processes import alive

from workbench.mcp.transport import StdioProcess, describe_exit, server_environment


def test_an_end_is_told_in_words() -> None:
    assert describe_exit(3) == "it exited with status 3"
    assert describe_exit(-9) == "it was ended by SIGKILL"
    assert describe_exit(None) == "it stopped answering"


def test_an_unsandboxed_server_sees_a_few_harmless_keys_and_its_own() -> None:
    env = server_environment({"PATH": "/bin", "HOME": "/h", "OPENAI_API_KEY": "k"}, {"TOKEN": "t"})
    assert env == {"PATH": "/bin", "HOME": "/h", "TOKEN": "t"}


async def test_a_server_that_dies_says_how_with_its_last_stderr_lines(tmp_path: Path) -> None:
    script = "import sys; sys.stderr.write('first\\nthe disk is full\\n'); sys.exit(4)"
    process = StdioProcess([sys.executable, "-c", script], dict(os.environ), str(tmp_path),
                           tmp_path / "logs" / "server.log")
    async with process.open() as (read, write):
        await asyncio.wait_for(process.exited.wait(), 10)
        for _ in range(50):
            if b"full" in process.stderr_tail:
                break
            await asyncio.sleep(0.02)
    assert process.exit_reason() == "it exited with status 4: first | the disk is full"
    assert "the disk is full" in (tmp_path / "logs" / "server.log").read_text()


async def test_stopping_ends_the_server_and_everything_it_started(tmp_path: Path) -> None:
    # The "server" ignores stdin closing and SIGTERM, and leaves a child behind.
    script = ("import signal, subprocess, sys, time\n"
              "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
              "child = subprocess.Popen(['sleep', '600'])\n"
              "sys.stderr.write(f'child {child.pid}\\n'); sys.stderr.flush()\n"
              "print('not json-rpc', flush=True)\n"
              "while True: time.sleep(1)\n")
    process = StdioProcess([sys.executable, "-c", script], dict(os.environ), str(tmp_path), None)
    async with process.open() as (read, write):
        message = await asyncio.wait_for(read.receive(), 10)
        assert isinstance(message, Exception)  # a line that is not JSON-RPC is reported, not fatal
        for _ in range(100):
            if b"child" in process.stderr_tail:
                break
            await asyncio.sleep(0.02)
        child = int(process.stderr_tail.split()[1])
        assert alive(child) and os.getpgid(child) == process.pid
    assert process.returncode == -9
    for _ in range(100):
        if not alive(child):
            break
        await asyncio.sleep(0.02)
    assert not alive(child)
