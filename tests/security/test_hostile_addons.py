"""Hostile input to the calendar and the address book through the real gateway and their
sandboxed workers: huge and deeply nested arguments, terminal escapes, zone names that
are paths, SQL in a search. Each is refused with a clear error (or found harmless),
nothing is written, and nothing joins the change list."""

from __future__ import annotations

import asyncio
import json

from commands import workbench

from workbench.core.calls import CallOptions
from workbench.core.host import Host

CAL = "addon__calendar__"
BOOK = "addon__contacts__"


def deep(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels):
        value = {"x": value}
    return value


def test_hostile_arguments_are_refused_and_leave_nothing(tmp_path):
    for addon in ("calendar", "contacts"):
        assert workbench("ext", "install", addon, "--yes").returncode == 0

    async def tries() -> None:
        with Host.open(cwd=tmp_path / "work") as host:
            async def call(name: str, args):
                return await host.tools.call(name, args, CallOptions(caller="person"))

            refused = {
                "deep": await call(f"{CAL}event-create", {"title": "x", "start": "2026-12-04", "repeat": deep(150)}),
                "huge": await call(f"{CAL}event-create", {"title": "x" * 2_000_000, "start": "2026-12-04"}),
                "long": await call(f"{BOOK}contact-create", {"name": "n" * 201}),
                "escape": await call(f"{CAL}event-create", {"title": "\x1b]52;c;b3duZWQ=\x07", "start": "2026-12-04"}),
                "bidi": await call(f"{BOOK}contact-create", {"name": "Anna\u202egro.elpmaxe"}),
                "zone": await call(f"{CAL}event-create", {"title": "x", "start": "2026-12-04T10:00",
                                                          "zone": "../../../../etc/localtime"}),
                "range": await call(f"{CAL}events-list", {"from": "2026-01-01", "to": "2027-12-31"}),
                "phones": await call(f"{BOOK}contact-create", {"name": "x", "phones": [{"number": "1"}] * 11}),
                "extra": await call(f"{CAL}event-create", {"title": "x", "start": "2026-12-04", "owner": "root"}),
            }
            for what, outcome in refused.items():
                assert not outcome.ok, what
                assert outcome.error["kind"] in ("invalid_arguments", "input_too_large", "tool"), (what, outcome.error)
                assert "Traceback" not in outcome.error["message"]
            assert "control character U+001B" in refused["escape"].error["message"]
            assert "bidirectional control U+202E" in refused["bidi"].error["message"]
            assert "not an IANA time zone" in refused["zone"].error["message"]
            assert "at most 400 days" in refused["range"].error["message"]
            # SQL in a search is only words to find.
            found = await call(f"{BOOK}contacts-search", {"query": "'; DROP TABLE contacts; --"})
            assert found.ok and found.result["contacts"] == []
            listed = await call(f"{CAL}events-list", {"from": "2026-12-01", "to": "2026-12-31"})
            assert listed.ok and listed.result["occurrences"] == []
            everyone = await call(f"{BOOK}contacts-export", {})
            assert everyone.ok and everyone.result["contacts"] == 0
            assert host.changes.list() == []

    asyncio.run(tries())
    assert json.loads(workbench("changes", "list", "--json").stdout) == []
