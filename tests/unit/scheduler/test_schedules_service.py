"""``Schedules`` is a service: it takes what it needs in ``__init__`` (a home, a store, a
bus and whatever answers ``ScheduleHost``), not a ``Host``; the host reaches it as
``host.schedules`` and keeps delegating methods while callers move."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from workbench.config.files import Config
from workbench.config.home import Home
from workbench.core.bus import EventBus
from workbench.core.host import Host
from workbench.core.schedules import Schedules
from workbench.store import Store

EVERY_5 = {"kind": "interval", "everyMinutes": 5}


class Desk:
    """A ``ScheduleHost`` that is not a ``Host``: a model, a folder, a config and two
    extensions, nothing loaded or run."""

    model = "echo"

    def __init__(self, home: Home, cwd: Path) -> None:
        self.cwd = cwd
        self.config = Config.load(home, cwd)
        self.loads = 0

    def ensure_extensions(self) -> None:
        self.loads += 1

    @property
    def loaded_extensions(self) -> list[dict[str, Any]]:
        return [{"name": "notes"}, {"name": "builtin"}]


@pytest.fixture
def store(home: Home):
    with Store.open(home.db_path) as opened:
        yield opened


def test_the_service_runs_on_what_it_is_given(home: Home, store: Store, workdir: Path) -> None:
    desk = Desk(home, workdir)
    schedules = Schedules(home=home, store=store, bus=EventBus(), host=desk)
    row = schedules.add_schedule(title="Stand-up", instruction="Summarize my day.", schedule=EVERY_5)
    card = row["card"]
    assert (card["model"], card["cwd"], card["extensions"]) == ("echo", str(workdir),
                                                                ["builtin", "notes"])
    assert desk.loads == 1
    assert [s["title"] for s in schedules.list_schedules()] == ["Stand-up"]
    assert schedules.pause_schedule(row["id"])["enabled"] is False


def test_the_host_reaches_it_as_an_attribute(workdir: Path) -> None:
    with Host.open(cwd=workdir, model="echo") as host:
        assert isinstance(host.schedules, Schedules)
        made = host.schedules.add_schedule(title="A", instruction="Say a.", schedule=EVERY_5)
        shown = host.schedules.add_schedule(title="B", instruction="Say b.", schedule=EVERY_5)
        assert [s["title"] for s in host.schedules()] == ["A", "B"]
        assert host.schedules.schedule(made["id"])["title"] == "A" and shown["card"]["model"] == "echo"
