"""``Schedules`` is a service: it takes what it needs in ``__init__`` (a home, a store, a
bus, the workspace, the default model, what loads the extensions…), not a ``Host``; the
host reaches it as ``host.schedules``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from workbench.config.files import Config
from workbench.config.home import Home
from workbench.core.bus import EventBus
from workbench.core.default_model import DefaultModel
from workbench.core.host import Host
from workbench.core.schedules import Schedules
from workbench.core.workspace import Workspace
from workbench.store import Store

EVERY_5 = {"kind": "interval", "everyMinutes": 5}


class Shelf:
    """Loads that are not a host's: two extensions, nothing loaded or run."""

    def __init__(self) -> None:
        self.loads = 0

    def ensure(self) -> None:
        self.loads += 1

    @property
    def extensions(self) -> list[dict[str, Any]]:
        return [{"name": "notes"}, {"name": "builtin"}]


@pytest.fixture
def store(home: Home):
    with Store.open(home.db_path) as opened:
        yield opened


def test_the_service_runs_on_what_it_is_given(home: Home, store: Store, workdir: Path) -> None:
    shelf = Shelf()
    workspace = Workspace(home=home, config=Config.load(home, workdir), folder=workdir)
    schedules = Schedules(home=home, store=store, bus=EventBus(), workspace=workspace,
                          default_model=DefaultModel(spec="echo", chosen=False, providers=None),
                          loading=shelf, tools=None, grants=None, switches=None, chats=None)
    row = schedules.add_schedule(title="Stand-up", instruction="Summarize my day.", schedule=EVERY_5)
    card = row["card"]
    assert (card["model"], card["cwd"], card["extensions"]) == ("echo", str(workdir),
                                                                ["builtin", "notes"])
    assert shelf.loads == 1
    assert [s["title"] for s in schedules.list_schedules()] == ["Stand-up"]
    assert schedules.pause_schedule(row["id"])["enabled"] is False


def test_the_host_reaches_it_as_an_attribute(workdir: Path) -> None:
    with Host.open(cwd=workdir, model="echo") as host:
        assert isinstance(host.schedules, Schedules)
        made = host.schedules.add_schedule(title="A", instruction="Say a.", schedule=EVERY_5)
        shown = host.schedules.add_schedule(title="B", instruction="Say b.", schedule=EVERY_5)
        assert [s["title"] for s in host.schedules()] == ["A", "B"]
        assert host.schedules.schedule(made["id"])["title"] == "A" and shown["card"]["model"] == "echo"
