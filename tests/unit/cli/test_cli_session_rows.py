"""``sessions list`` prints the rows the core returns, ``host.chats.rows`` (``SessionRow``),
one per chat, newest first: the rows the TUI's sessions screen draws
(``tests/tui/test_tui_sessions.py``)."""

from __future__ import annotations

import json
from pathlib import Path

from commands import workbench
from workbench.core.host import Host
from workbench.core.sessions import SessionRow


def test_the_cli_prints_the_rows_the_core_returns(workdir: Path) -> None:
    with Host.open(cwd=workdir, model="echo") as host:
        older = host.chats.new(title="first  chat\nof two")
        host.store.add_message(older["id"], "user", content="hello")
        newer = host.chats.new(title=None)
        rows = host.chats.rows()
    assert [row.id for row in rows] == [newer["id"], older["id"]]
    assert all(isinstance(row, SessionRow) for row in rows)
    first = rows[1]
    assert (first.title, first.message_count, first.folder) == ("first chat of two", 1,
                                                                 str(workdir))

    listed = json.loads(workbench("sessions", "list", "--json").stdout)
    assert listed == [row.to_json() for row in rows]
    plain = workbench("sessions", "list").stdout.splitlines()
    assert [line.split()[0] for line in plain] == [row.id[:12] for row in rows]
    assert plain[1].endswith("   1 msgs  first chat of two")

