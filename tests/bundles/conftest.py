"""A project and a host to make and call bundles in, under each JavaScript runtime.

``bundle_lab`` opens a host in ``tmp_path/project`` whose responder grants what a tool
asks for this chat; ``lab.manage`` and ``lab.call`` go through the gateway as the
model's calls do (``extension_manage``, ``extension_call``), ``lab.service`` is the
service the CLI calls. ``runtime`` runs every test of a module that uses it under
Node and under Deno's Node compatibility.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from workbench.core.bundles import bundles, set_runtime
from workbench.core.calls import CallOptions, ToolOutcome
from workbench.core.host import Host
from bundle_samples import Grants


class BundleLab:
    def __init__(self, host: Host, project: Path, grants: Grants) -> None:
        self.host = host
        self.project = project
        self.grants = grants
        self.service = bundles(host)
        self.session_id = host.chats.new("bundles")["id"]

    async def outcome(self, tool: str, arguments: dict[str, Any]) -> ToolOutcome:
        return await self.host.tools.call(tool, arguments, CallOptions(caller="model", session_id=self.session_id))

    async def manage(self, **arguments: Any) -> dict[str, Any]:
        outcome = await self.outcome("extension_manage", arguments)
        assert outcome.ok, outcome.error
        return outcome.result

    async def call(self, **arguments: Any) -> dict[str, Any]:
        outcome = await self.outcome("extension_call", arguments)
        assert outcome.ok, outcome.error
        return outcome.result

    async def failed(self, tool: str, **arguments: Any) -> dict[str, Any]:
        outcome = await self.outcome(tool, arguments)
        assert not outcome.ok, outcome.result
        return outcome.error

    def revision(self, bundle_id: str, digest: str) -> Path:
        return self.project / ".workbench" / "bundles" / bundle_id / digest


@pytest.fixture(params=["node", "deno"])
def runtime(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def bundle_lab(tmp_path: Path, home, runtime: str):
    project = tmp_path / "project"
    project.mkdir()
    grants = Grants()
    async with Host.open(cwd=project, model="echo", responder=grants) as host:
        set_runtime(host, runtime)
        yield BundleLab(host, project, grants)
