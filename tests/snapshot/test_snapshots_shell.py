"""How the app's own screens look: the Tools menu, the notification drawer, the Tasks
screen and its form, Settings and its dialog, the MCP servers and the keys, in
workbench-dark and workbench-light (a few in workbench-high-contrast too), at 80x24.

The clock of the store is fixed and the zone is UTC, so times read the same on every
run; the user's home (``HOME``) is the test's folder, so paths read ``~/home/…``.
Accept intended changes with ``pytest tests/snapshot/test_snapshots_shell.py
--snapshot-update`` (the whole file).
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path

import pytest
from app_factory import SMALL, no_cursor_blink, wait_until
from visible import settled
from textual.widgets import DataTable, Input, ListView, OptionList, TextArea

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "ext"))
from ext_samples import DEFAULT_PERMISSIONS, tool, write_extension  # noqa: E402

from workbench.config.files import set_setting  # noqa: E402
from workbench.config.home import Home  # noqa: E402
from workbench.core.host import Host  # noqa: E402
from workbench.mcp.config import ServerConfig, write_server  # noqa: E402
from workbench.tui.forms.schedule_screen import ScheduleScreen  # noqa: E402
from workbench.tui.screens.drawer import NotificationDrawer  # noqa: E402
from workbench.tui.screens.help import HelpScreen  # noqa: E402
from workbench.tui.screens.mcp import McpScreen  # noqa: E402
from workbench.tui.screens.setting_form import SettingFormScreen  # noqa: E402
from workbench.tui.screens.settings import SettingsScreen  # noqa: E402
from workbench.tui.screens.tasks import TasksScreen  # noqa: E402
from workbench.tui.screens.tools_menu import ToolsMenuScreen  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / ".mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist"
NOW = int(dt.datetime(2030, 1, 7, 8, 0, tzinfo=dt.timezone.utc).timestamp() * 1000)
"""Monday 7 January 2030, 08:00 UTC: the store's clock in every snapshot."""
FOO = "loca-extension-foo"
THEMES = pytest.mark.parametrize("theme", ["workbench-dark", "workbench-light"])
ALL_THEMES = pytest.mark.parametrize("theme", ["workbench-dark", "workbench-light",
                                               "workbench-high-contrast"])


def yes(_plan: object) -> bool:
    return True


@pytest.fixture(autouse=True)
def home(tmp_path: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch,
         _fixed_ids_and_paths: None) -> Home:
    """``HOME`` is the test's folder, the zone UTC; the registry a closed port."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TZ", "UTC")
    found = Home.resolve().ensure()
    set_setting(found, workdir, "extensions.registry", "http://127.0.0.1:9")
    return found


@pytest.fixture
def shell_app(snapshot_app, home: Home, workdir: Path):
    """An app in ``theme`` whose store's clock is ``NOW``."""

    def make(theme: str):
        set_setting(home, workdir, "theme", theme)
        app = snapshot_app([])
        app.host.store.clock = lambda: NOW
        return app

    return make


async def ready(pilot) -> None:
    """The chat is drawn, the extensions are loaded and this app holds the scheduler."""
    app = pilot.app
    await no_cursor_blink(pilot)
    await wait_until(pilot, lambda: (app.host.schedules.scheduler_holder() or {}).get("pid") == os.getpid())
    await app.workers.wait_for_complete()


async def show(pilot, key: str, kind: type, loaded) -> None:
    """Press ``key``, wait for a ``kind`` screen and until ``loaded(screen)``; then settle."""
    app = pilot.app
    await pilot.press(key)
    await wait_until(pilot, lambda: isinstance(app.screen, kind))
    await wait_until(pilot, lambda: loaded(app.screen))
    await app.workers.wait_for_complete()
    await settled(pilot)


def no_blink(screen) -> None:
    for field in [*screen.query(Input), *screen.query(TextArea)]:
        field.cursor_blink = False


def schedules(host: Host) -> None:
    """Two schedules: one with runs that went well and badly, one never run."""
    digest = host.schedules.add_schedule(title="Daily digest", instruction="Summarize what changed in "
                               "~/notes since yesterday, in five bullet points.",
                               schedule={"kind": "weekly", "weekdays": [1, 3], "hour": 9,
                                         "minute": 0})
    host.schedules.add_schedule(title="Water the plants", instruction="Remind me to water the plants.",
                      schedule={"kind": "interval", "everyMinutes": 90})
    for status, error in (("ok", None), ("failed", "timed out: the run took longer than 900 s"),
                          ("paused", "it needed read ~/notes, which its run card does not grant")):
        run = host.store.add_run(digest["id"], "Daily digest", fired_by="schedule", due_at=None)
        host.store.start_run(run, owner="1@elsewhere")
        host.store.finish_run(run, status, error=error)


class TestToolsMenu:
    """A chat's Tools menu: the switches and the grants of the selected extension."""

    @ALL_THEMES
    def test_tools_menu(self, snap_compare, shell_app, workdir, theme) -> None:
        """An extension with a granted and an ungranted permission, and a Revoke button."""
        app = shell_app(theme)
        app.host.extensions.install(str(write_extension(
            workdir / "foo", tools=[tool("fetch_page", DEFAULT_PERMISSIONS), tool("count_words")])),
            yes)
        read = next(r for r in app.host.grants.explain(f"{FOO}.fetch_page") if r["kind"] == "read")
        app.host.store.add_grant(f"{FOO}.fetch_page", "read", read["value"], "always")

        async def run_before(pilot) -> None:
            await ready(pilot)
            await show(pilot, "ctrl+t", ToolsMenuScreen, lambda menu: {FOO, "shell"} <= {r.name for r in menu.rows})
            menu = pilot.app.screen
            menu.query_one(ListView).index = [r.name for r in menu.rows].index(FOO)
            await wait_until(pilot, lambda: "fetch_page" in str(
                [str(s.render()) for s in menu.query("#tools-detail Static")]))
            await pilot.app.workers.wait_for_complete()
            await settled(pilot)  # the tool's details drawn

        assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


class TestDrawer:
    """The notification drawer over the chat."""

    @THEMES
    def test_drawer(self, snap_compare, shell_app, theme) -> None:
        """A failed run and a paused one unread, an older one read."""
        app = shell_app(theme)
        store = app.host.store
        old = store.add_notification("info", "Schedule made: Daily digest", "it runs Mon, Wed at "
                                     "09:00", source="scheduler")
        store.mark_notifications_read([old])
        store.add_notification("warning", "Scheduled run paused: Daily digest", "it needed read "
                               "~/notes, which its run card does not grant", source="scheduler")
        store.add_notification("error", "Scheduled run failed: Water the plants", "the run's "
                               "process exited with status 1 without an outcome",
                               source="scheduler")

        async def run_before(pilot) -> None:
            await ready(pilot)
            await show(pilot, "ctrl+n", NotificationDrawer,
                       lambda drawer: drawer.query_one(OptionList).option_count == 3)

        assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


class TestTasks:
    """The Tasks screen and the form of a scheduled prompt."""

    @ALL_THEMES
    def test_tasks(self, snap_compare, shell_app, theme) -> None:
        """Two schedules; the selected one with its card and its ok, failed and paused runs."""
        app = shell_app(theme)
        schedules(app.host)

        async def run_before(pilot) -> None:
            await ready(pilot)
            await show(pilot, "f2", TasksScreen, lambda screen: screen.detail is not None
                       and screen.holder is not None)

        assert snap_compare(app, terminal_size=SMALL, run_before=run_before)

    @THEMES
    def test_form(self, snap_compare, shell_app, theme) -> None:
        """Editing a schedule, with a time the form cannot read."""
        app = shell_app(theme)
        schedules(app.host)

        async def run_before(pilot) -> None:
            await ready(pilot)
            await show(pilot, "f2", TasksScreen, lambda screen: screen.detail is not None)
            await show(pilot, "e", ScheduleScreen, lambda form: True)
            form = pilot.app.screen
            no_blink(form)
            form.query_one("#schedule-time", Input).value = "9"
            await pilot.press("ctrl+s")
            await wait_until(pilot, lambda: "-error" in form.query_one("#schedule-message").classes)
            await settled(pilot)  # the error drawn

        assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


class TestSettings:
    """The Settings screen and the dialog that changes one value."""

    @staticmethod
    def _config(home: Home, workdir: Path) -> None:
        home.config_file.write_text(home.config_file.read_text()
                                    + "\n# a slow machine\n[tools]\ntimeout_ms = 600000\n")
        project = workdir / ".workbench" / "config.toml"
        project.parent.mkdir()
        project.write_text("[memories]\ncontext_budget_chars = 4000\n")

    @THEMES
    def test_settings(self, snap_compare, shell_app, home, workdir, theme) -> None:
        """Values from the defaults, the person's config, and a project config not trusted."""
        self._config(home, workdir)
        app = shell_app(theme)

        async def run_before(pilot) -> None:
            await ready(pilot)
            await show(pilot, "f4", SettingsScreen,
                       lambda screen: screen.query_one(DataTable).row_count > 0)
            screen = pilot.app.screen
            screen.query_one(DataTable).move_cursor(row=2)
            await settled(pilot)  # the screen has handled the highlighted row (RowHighlighted)

        assert snap_compare(app, terminal_size=SMALL, run_before=run_before)

    @THEMES
    def test_refused_value(self, snap_compare, shell_app, home, workdir, theme) -> None:
        """A value the setting refuses: said in the dialog, which keeps it."""
        self._config(home, workdir)
        app = shell_app(theme)

        async def run_before(pilot) -> None:
            await ready(pilot)
            await show(pilot, "f4", SettingsScreen,
                       lambda screen: screen.query_one(DataTable).row_count > 0)
            pilot.app.screen.query_one(DataTable).move_cursor(row=2)
            await show(pilot, "enter", SettingFormScreen, lambda form: True)
            form = pilot.app.screen
            no_blink(form)
            form.query_one(Input).value = "-5"
            await pilot.press("enter")
            await wait_until(pilot, lambda: "-error" in form.query_one("#setting-message").classes)
            await settled(pilot)  # the error drawn

        assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


class TestMcp:
    """The MCP servers: one listed (its tools from the cache), one waiting for trust."""

    @THEMES
    def test_servers(self, snap_compare, shell_app, home, workdir, theme) -> None:
        """server-everything stopped with its tools; a project server not trusted."""
        assert EVERYTHING.exists(), "the MCP test servers are missing; `make test` installs them"
        (workdir / "everything").symlink_to(EVERYTHING)
        write_server(home.config_file, ServerConfig(name="everything", command="node",
                                                    args=("everything/index.js", "stdio")))
        (workdir / ".workbench").mkdir()
        (workdir / ".workbench" / "config.toml").write_text(
            '[mcp.servers.team]\ncommand = "team-server"\n')
        Host.open(cwd=workdir).close()  # lists the tools once, into the cache
        app = shell_app(theme)

        async def run_before(pilot) -> None:
            await ready(pilot)
            await show(pilot, "f3", McpScreen, lambda screen: len(screen.servers) == 2)

        assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


class TestHelp:
    """The keys over the Tasks screen: its own, then the app's."""

    @ALL_THEMES
    def test_help(self, snap_compare, shell_app, theme) -> None:
        """Generated from the bindings; scrolls when longer than the screen."""
        app = shell_app(theme)
        schedules(app.host)

        async def run_before(pilot) -> None:
            await ready(pilot)
            await show(pilot, "f2", TasksScreen, lambda screen: screen.detail is not None)
            await show(pilot, "f1", HelpScreen, lambda screen: True)

        assert snap_compare(app, terminal_size=SMALL, run_before=run_before)
