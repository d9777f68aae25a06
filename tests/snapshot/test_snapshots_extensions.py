"""How the Extensions screen looks: its three tabs and the review of a plan.

The user's home (``HOME``) is the test's folder, so the paths shown (the workbench
home, the extensions' sources) read ``~/home/…`` and ``~/work/…`` on every machine.
Accept intended changes with ``pytest tests/snapshot --snapshot-update``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from app_factory import SIZE, SMALL, no_cursor_blink, wait_until
from visible import settled, until_screen

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "ext"))
from ext_samples import DEFAULT_PERMISSIONS, make_tgz, tool, write_extension  # noqa: E402
from test_ext_registry import Registry  # noqa: E402

from workbench.config.files import set_setting  # noqa: E402
from workbench.config.home import Home  # noqa: E402
from workbench.tui.screens.extensions import ExtensionsScreen  # noqa: E402
from workbench.tui.screens.review import ReviewScreen  # noqa: E402
from workbench.tui.widgets.package_list import PackageList  # noqa: E402
from workbench.tui.widgets.status_view import StatusView  # noqa: E402

FOO = "loca-extension-foo"

SKILL = "---\nname: summing\ndescription: Add numbers up, step by step.\n---\n# Summing\n"


def yes(_plan: object) -> bool:
    return True


@pytest.fixture(autouse=True)
def home(tmp_path: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch,
         _fixed_ids_and_paths: None) -> Home:
    """``HOME`` is the test's folder; the registry is a closed port unless a test says."""
    monkeypatch.setenv("HOME", str(tmp_path))
    found = Home.resolve().ensure()
    set_setting(found, workdir, "extensions.registry", "http://127.0.0.1:9")
    return found


def foo_source(workdir: Path) -> Path:
    """An extension with two tools, permissions with reasons, knowledge and a skill."""
    return write_extension(
        workdir / "foo", tools=[tool("fetch_page", DEFAULT_PERMISSIONS), tool("count_words")],
        files={"knowledge/guide.md": "# Guide\n\nHow to use it.\n",
               "skills/summing/SKILL.md": SKILL},
        manifest={"displayName": "Foo Tools", "description": "Fetch pages and count words.",
                  "memories": [{"kind": "knowledge", "path": "knowledge/guide.md"},
                               {"kind": "skill", "path": "skills/summing"}]})


async def open_extensions(pilot) -> ExtensionsScreen:
    """Open the screen with ctrl+e and wait until the list and the report are in."""
    app = pilot.app
    await no_cursor_blink(pilot)
    await pilot.press("ctrl+e")
    await wait_until(pilot, lambda: isinstance(app.screen, ExtensionsScreen))
    screen = app.screen
    await wait_until(pilot, lambda: screen.extension_list.extensions
                     and screen.query_one(StatusView).report is not None)
    await app.workers.wait_for_complete()
    await settled(pilot)  # the list and the status drawn
    return screen


async def choose(pilot, screen: ExtensionsScreen, name: str) -> None:
    names = [extension.name for extension in screen.extension_list.extensions]
    screen.extension_list.highlighted = names.index(name)
    await settled(pilot)  # the screen has handled the highlight and shows that extension


class TestInstalledTab:
    """The Installed tab: the list with state badges and the selected extension."""

    def test_installed(self, snap_compare, snapshot_app, workdir) -> None:
        """The built-in and a folder extension; the latter selected, with its tools."""
        app = snapshot_app([])
        app.host.extensions.install(str(foo_source(workdir)), yes)

        async def run_before(pilot) -> None:
            screen = await open_extensions(pilot)
            await choose(pilot, screen, FOO)

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)

    def test_installed_small(self, snap_compare, snapshot_app, workdir) -> None:
        """The same in an 80x24 terminal."""
        app = snapshot_app([])
        app.host.extensions.install(str(foo_source(workdir)), yes)

        async def run_before(pilot) -> None:
            screen = await open_extensions(pilot)
            await choose(pilot, screen, FOO)

        assert snap_compare(app, terminal_size=SMALL, run_before=run_before)

    def test_held(self, snap_compare, snapshot_app, workdir, home) -> None:
        """An extension whose files changed after approval: held, with why and what to do."""
        app = snapshot_app([])
        app.host.extensions.install(str(foo_source(workdir)), yes)
        main = home.extensions_dir / FOO / "main.py"
        main.write_text(main.read_text() + "# changed\n")

        async def run_before(pilot) -> None:
            screen = await open_extensions(pilot)
            await choose(pilot, screen, FOO)

        assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


class TestReview:
    """The review of a plan before anything is installed."""

    @staticmethod
    async def _review_foo(pilot) -> None:
        await open_extensions(pilot)
        await pilot.press("i", *"foo", "enter")
        await until_screen(pilot, ReviewScreen)

    def test_install_review(self, snap_compare, snapshot_app, workdir) -> None:
        """Tools with each permission and its reason, hooks, knowledge, skills."""
        foo_source(workdir)
        assert snap_compare(snapshot_app([]), terminal_size=SIZE, run_before=self._review_foo)

    def test_install_review_small(self, snap_compare, snapshot_app, workdir) -> None:
        """The same review in an 80x24 terminal."""
        foo_source(workdir)
        assert snap_compare(snapshot_app([]), terminal_size=SMALL, run_before=self._review_foo)

    def test_update_review(self, snap_compare, snapshot_app, workdir) -> None:
        """An update that widens a permission and adds a tool: the difference comes first."""
        app = snapshot_app([])
        app.host.extensions.install(str(foo_source(workdir)), yes)
        wider = {**DEFAULT_PERMISSIONS,
                 "net": [{"host": "*", "ports": [443], "reason": "Fetch any page you ask for."}]}
        write_extension(workdir / "foo", version="2.0.0",
                        tools=[tool("fetch_page", wider), tool("count_words"), tool("summarize")])

        async def run_before(pilot) -> None:
            screen = await open_extensions(pilot)
            await choose(pilot, screen, FOO)
            await pilot.press("u")
            await until_screen(pilot, ReviewScreen)

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.fixture
def registry(home: Home, workdir: Path) -> Iterator[Registry]:
    """A loopback npm registry, named by the ``extensions.registry`` setting."""
    served = Registry()
    served.thread.start()
    set_setting(home, workdir, "extensions.registry", served.url)
    try:
        yield served
    finally:
        served.server.shutdown()
        served.server.server_close()


class TestMarketplaceTab:
    """The Marketplace tab: search results from the registry."""

    def test_results(self, snap_compare, snapshot_app, registry, workdir) -> None:
        """Two packages found, with version and description."""
        tarball = make_tgz(write_extension(workdir / "pkg"), workdir / "foo.tgz")
        registry.publish(FOO, {"1.0.0": tarball.read_bytes()}, latest="1.0.0")
        registry.search_results = {
            "loca-extension": [{"name": FOO, "version": "1.0.0",
                                "description": "Fetch pages and count words."}],
            "workbench-extension": [{"name": "wb-weather", "version": "0.3.1",
                                     "description": "Forecasts for the places you name."}]}

        async def run_before(pilot) -> None:
            screen = await open_extensions(pilot)
            await pilot.press("2", "enter")
            await wait_until(pilot, lambda: len(screen.query_one(PackageList).results) == 2)
            await pilot.app.workers.wait_for_complete()
            await settled(pilot)  # the results drawn

        assert snap_compare(snapshot_app([]), terminal_size=SIZE, run_before=run_before)

    def test_unreachable_registry(self, snap_compare, snapshot_app) -> None:
        """A registry that cannot be reached: a message, not a crash."""

        async def run_before(pilot) -> None:
            screen = await open_extensions(pilot)
            await pilot.press("2")
            await wait_until(pilot, lambda: getattr(screen.focused, "id", None) == "market-search")
            await pilot.press(*"weather", "enter")
            note = screen.query_one("#market-message")
            await wait_until(pilot, lambda: "-error" in note.classes)
            screen.query_one("#market-search").cursor_blink = False
            await settled(pilot)

        assert snap_compare(snapshot_app([]), terminal_size=SMALL, run_before=run_before)


class TestStatusTab:
    """The Status tab: loaded extensions, a load error and a tool-name conflict."""

    @staticmethod
    def _conflict_and_broken(app, workdir: Path, home: Home) -> None:
        for name, tools in (("alpha", ["shared_tool", "alpha_only"]), ("beta", ["shared_tool"]),
                            ("gamma", ["gamma_tool"])):
            source = write_extension(workdir / name, name=name, tools=[tool(t) for t in tools])
            app.host.extensions.install(str(source), yes)
        (home.extensions_dir / "gamma" / "loca.json").write_text('{"name": "gamma", "tools": 3}')

    @staticmethod
    async def _status(pilot) -> None:
        await open_extensions(pilot)
        await pilot.press("3")
        await settled(pilot)  # the Status tab shown

    def test_status(self, snap_compare, snapshot_app, workdir, home) -> None:
        """``shared_tool`` is defined twice (alpha wins) and gamma's manifest is broken."""
        app = snapshot_app([])
        self._conflict_and_broken(app, workdir, home)
        assert snap_compare(app, terminal_size=SIZE, run_before=self._status)

    def test_status_small(self, snap_compare, snapshot_app, workdir, home) -> None:
        """The same report in an 80x24 terminal."""
        app = snapshot_app([])
        self._conflict_and_broken(app, workdir, home)
        assert snap_compare(app, terminal_size=SMALL, run_before=self._status)


class Light:
    """Runs a class's scenes again in workbench-light."""

    @pytest.fixture(autouse=True)
    def _light(self, home: Home, workdir: Path) -> None:
        set_setting(home, workdir, "theme", "workbench-light")


class TestInstalledTabLight(Light, TestInstalledTab):
    """The Installed tab in workbench-light."""


class TestReviewLight(Light, TestReview):
    """The review of a plan in workbench-light."""


class TestMarketplaceTabLight(Light, TestMarketplaceTab):
    """The Marketplace tab in workbench-light."""


class TestStatusTabLight(Light, TestStatusTab):
    """The Status tab in workbench-light."""
