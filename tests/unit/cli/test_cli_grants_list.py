"""``grants list`` prints what ``host.grants.standing`` returns: every standing grant and
denial, or one tool's, named as a person names the tool."""

from __future__ import annotations

import json
from pathlib import Path

from commands import workbench
from workbench.core.host import Host
from workbench.tools.registry import HOST_RUNTIME


def test_grants_list_prints_the_grants_the_core_returns(workdir: Path) -> None:
    with Host.open(cwd=workdir, model="echo") as host:
        tool = next(t for t in host.registry.available() if t.runtime != HOST_RUNTIME)
        host.store.add_grant(tool.grant_key, "env", "HOME", "always")
        host.store.add_grant("someone.else", "env", "PATH", "deny")
        mine = host.grants.standing(tool.qualified_name)
        every = host.grants.standing()
    assert [(row["kind"], row["value"], row["scope"]) for row in mine] == [("env", "HOME", "always")]
    assert {row["value"] for row in every} == {"HOME", "PATH"}

    listed = json.loads(workbench("grants", "list", "--tool", tool.qualified_name, "--json").stdout)
    assert listed == mine
    plain = workbench("grants", "list").stdout
    assert "HOME" in plain and "PATH" in plain and "someone.else" in plain
