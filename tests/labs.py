"""The hostile suite's lab: a host plus helpers to install hostile tools and call them
with chosen grants (importable from every test folder, beside the root conftest)."""

from __future__ import annotations

from pathlib import Path

from extension_folders import write_extension

from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.tools.loader import load_extension


class Lab:
    """A host plus helpers to install hostile tools and call them with chosen grants."""

    def __init__(self, host: Host, root: Path) -> None:
        self.host = host
        self.root = root

    def extension(self, name: str, code: str, tools: dict[str, dict], *, runtime: str = "python",
                  database: bool = False) -> Path:
        entry = "main.py" if runtime == "python" else "index.ts"
        folder = write_extension(self.root / "extensions" / name, name, tools, code=code,
                                 entry=entry, database=database,
                                 description="A hostile test extension.")
        added = load_extension(self.host.registry, folder)
        assert added, self.host.registry.load_errors
        return folder

    async def call(self, tool: str, args: dict | None = None, *, grant_all: bool = True,
                   grants: tuple = ()):
        if grant_all:
            grants = self.host.grants.from_flags(tool, [], grant_all=True)
        return await self.host.tools.call(tool, args or {}, CallOptions(grants=grants, prompt=False))
