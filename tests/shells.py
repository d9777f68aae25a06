"""A project folder and a host to run the ``shell`` tool in, for the shell's tests: the
``shell_lab`` fixture (``tests/conftest.py`` and ``tests/security/conftest.py`` use it)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from workbench.core.gateway import CallOptions, ToolOutcome
from workbench.core.host import Host
from workbench.events import NetworkRequest, PermissionAnswer, Request, RequestDenied

GRANT = (("run", "bash"),)


class Answers:
    """A responder that answers network cards from a list, recording each request."""

    def __init__(self, network: list[str] | None = None) -> None:
        self.network = list(network or [])
        self.asked: list[Request] = []

    async def answer(self, request: Request) -> Any:
        self.asked.append(request)
        if isinstance(request, NetworkRequest) and self.network:
            return self.network.pop(0)
        if not isinstance(request, NetworkRequest):
            return PermissionAnswer("once")
        raise RequestDenied("no answer left in the test")


class ShellLab:
    """A host opened in ``project``; ``run`` calls the shell there."""

    def __init__(self, host: Host, project: Path, answers: Answers) -> None:
        self.host = host
        self.project = project
        self.answers = answers
        self.session_id: str | None = None
        """The chat the calls are made in (none unless a test starts one)."""

    async def run(self, command: str, **arguments: Any) -> dict[str, Any]:
        outcome = await self.outcome(command, **arguments)
        assert outcome.ok, outcome.error
        return outcome.result

    async def outcome(self, command: str, **arguments: Any) -> ToolOutcome:
        return await self.host.tools.call("shell", {"command": command, **arguments},
                                         CallOptions(grants=GRANT, session_id=self.session_id))

    def start(self, command: str, **arguments: Any) -> asyncio.Task[ToolOutcome]:
        return asyncio.ensure_future(self.outcome(command, **arguments))


def write_config(home: Path, text: str) -> None:
    (home / "config.toml").write_text(text)


def python_programs() -> str:
    """``shell.programs`` with this interpreter's installation too (its venv and base)."""
    folders = ["/usr", "/bin", "/sbin", "/lib", "/lib64", sys.prefix, sys.base_prefix]
    return "[" + ", ".join(f'"{f}"' for f in dict.fromkeys(folders)) + "]"


@pytest.fixture
def shell_config(home) -> str:
    """The config the lab's home gets (a test overrides it to change settings)."""
    return ""


@pytest.fixture
def network_answers() -> list[str]:
    return []


@pytest.fixture
async def shell_lab(tmp_path: Path, home, shell_config: str, network_answers: list[str]):
    project = tmp_path / "project"
    project.mkdir()
    write_config(home.root, shell_config)
    answers = Answers(network_answers)
    async with Host.open(cwd=project, model="echo", responder=answers) as host:
        yield ShellLab(host, project, answers)
