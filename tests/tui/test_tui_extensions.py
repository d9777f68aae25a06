"""Pilot tests of the Extensions screen: installed, marketplace and status, by keyboard."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from shell_helpers import palette_listed
from textual.widgets import Input, Static, TabbedContent, Tabs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "ext"))
from ext_samples import DEFAULT_PERMISSIONS, make_tgz, tool, tree, write_extension  # noqa: E402
from test_ext_registry import Registry  # noqa: E402

from visible import settled, until_screen, until_shown

from workbench.config.files import set_setting  # noqa: E402
from workbench.config.home import Home  # noqa: E402
from workbench.tui.paths import shown_path  # noqa: E402
from workbench.tui.screens.confirm import ConfirmScreen  # noqa: E402
from workbench.tui.screens.extensions import ExtensionsScreen  # noqa: E402
from workbench.tui.screens.review import ReviewScreen  # noqa: E402
from workbench.tui.screens.source_prompt import SourcePromptScreen  # noqa: E402
from workbench.tui.widgets.extension_detail import ExtensionDetail  # noqa: E402
from workbench.tui.widgets.extension_list import ExtensionList  # noqa: E402
from workbench.tui.widgets.package_list import PackageList  # noqa: E402
from workbench.tui.widgets.plan_view import PlanView, dependency_widgets, file_size  # noqa: E402
from workbench.tui.widgets.status_view import StatusView  # noqa: E402
from workbench.tui.widgets.tool_view import ToolView  # noqa: E402

SIZE = (100, 30)
NOTES_TS = Path(__file__).resolve().parents[1] / "fixtures" / "extensions" / "notes-ts"
NOTES = "loca-extension-notes"
FOO = "loca-extension-foo"


def yes(_plan: object) -> bool:
    return True


def text_of(widget) -> str:
    """Every line the widget's ``Static`` children show, joined."""
    return "\n".join(str(static.content) for static in widget.query(Static))


def listed(screen: ExtensionsScreen) -> dict[str, str]:
    return {extension.name: extension.state for extension in screen.extension_list.extensions}


async def open_screen(pilot, until) -> ExtensionsScreen:
    """Press ctrl+e in the chat and wait until the Installed list is filled."""
    app = pilot.app
    await pilot.press("ctrl+e")
    await until_screen(pilot, ExtensionsScreen)
    screen = app.screen
    await until(pilot, lambda: "builtin" in listed(screen))
    return screen


async def settle(pilot, until, screen: ExtensionsScreen) -> None:
    """Wait until the screen's background work has ended and its results are shown."""
    await until(pilot, lambda: not screen.working)
    await pilot.app.workers.wait_for_complete()
    await settled(pilot)  # the results handled and drawn


async def review(pilot, until) -> ReviewScreen:
    return await until_shown(pilot, lambda: pilot.app.screen
                             if isinstance(pilot.app.screen, ReviewScreen) else None)


async def select(pilot, screen: ExtensionsScreen, name: str) -> None:
    names = [extension.name for extension in screen.extension_list.extensions]
    screen.extension_list.highlighted = names.index(name)
    await until_shown(pilot, lambda: screen.selected is not None and screen.selected.name == name)


def message(screen: ExtensionsScreen) -> str:
    return str(screen.query_one("#extensions-message", Static).content)


@pytest.fixture
def home(workdir: Path) -> Home:
    """The test's home, with the registry at a closed port unless a test sets one."""
    found = Home.resolve().ensure()
    set_setting(found, workdir, "extensions.registry", "http://127.0.0.1:9")
    return found


# --- opening and closing -----------------------------------------------------------------

class TestOpening:
    async def test_ctrl_e_opens_the_installed_tab_and_escape_goes_back(self, make_app, until,
                                                                     home) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_screen(pilot, until)
            assert listed(screen) == {"builtin": "ok"}
            detail = screen.query_one(ExtensionDetail)
            await until_shown(pilot, lambda: detail.extension is not None
                              and detail.query(ToolView))
            tools = [view.tool_name for view in detail.query(ToolView)]
            assert "read_file" in tools
            assert "Read the files of the project this chat works in." in text_of(detail)
            assert screen.focused is screen.extension_list
            await pilot.press("escape")
            assert app.screen is app.chat
            await pilot.press("ctrl+e")
            await until(pilot, lambda: app.screen is screen)
            await pilot.press("ctrl+e")
            assert app.screen is app.chat

    async def test_the_command_palette_opens_it(self, make_app, until, home) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+p")
            await until(pilot, lambda: palette_listed(app))
            await pilot.press(*"Extensions")
            await until(pilot, lambda: palette_listed(app, "Extensions"))
            await pilot.press("enter")
            await until_screen(pilot, ExtensionsScreen)

    async def test_number_keys_switch_tabs(self, make_app, until, home) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_screen(pilot, until)
            await pilot.press("2")
            # The tab is shown, then its search box takes the focus (a message later).
            await until(pilot, lambda: screen.active_tab == "marketplace"
                        and isinstance(screen.focused, Input))
            await pilot.press("3")  # a digit typed in the search box stays there
            await until(pilot, lambda: screen.query_one("#market-search", Input).value == "3")
            assert screen.active_tab == "marketplace"
            await pilot.press("escape")
            await pilot.press("ctrl+e")
            await until(pilot, lambda: app.screen is screen)
            screen.set_focus(screen.query_one(PackageList))
            await until(pilot, lambda: isinstance(screen.focused, PackageList))
            await pilot.press("3")
            await until(pilot, lambda: screen.active_tab == "status")
            await pilot.press("1")
            await until(pilot, lambda: screen.active_tab == "installed")


    async def test_the_last_tab_chosen_stays(self, make_app, until, home) -> None:
        """Keys that come faster than the tabs are shown: the last one wins, and the
        focus given for an earlier tab does not bring that tab back."""
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_screen(pilot, until)
            for tab in ("marketplace", "status", "installed", "status", "marketplace"):
                screen.action_show_tab(tab)  # one after another, no message handled between
            await until(pilot, lambda: screen.active_tab == "marketplace"
                        and isinstance(screen.focused, Input))
            screen.action_show_tab("status")
            screen.action_show_tab("installed")
            await until_shown(pilot, lambda: screen.active_tab == "installed"
                              and isinstance(screen.focused, ExtensionList))
            await pilot.press("3")
            await until_shown(pilot, lambda: screen.active_tab == "status"
                              and isinstance(screen.focused, StatusView))
            assert screen.query_one(TabbedContent).query_one(Tabs).active.endswith("status")


# --- installing ----------------------------------------------------------------------------

class TestInstall:
    async def test_install_a_folder_after_reviewing_it(self, make_app, until, home) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_screen(pilot, until)
            await pilot.press("i")
            await until_screen(pilot, SourcePromptScreen)
            await pilot.press(*str(NOTES_TS), "enter")
            shown = await review(pilot, until)
            plan = shown.query_one(PlanView)
            assert [view.tool_name for view in plan.query(ToolView)] == ["add_note", "list_notes"]
            assert text_of(plan).count("needs no permissions") == 2
            assert "yes, dropped when the extension is removed" in text_of(plan)
            assert f"from {NOTES_TS}" in text_of(plan)
            await pilot.press("a")
            await settle(pilot, until, screen)
            await until(pilot, lambda: NOTES in listed(screen))
            assert listed(screen)[NOTES] == "ok"
            assert screen.selected is not None and screen.selected.name == NOTES
            assert message(screen) == f"Installed {NOTES} 0.0.0."
            # The chat offers its tools now: the registry was rebuilt.
            assert {"add_note", "list_notes"} <= {spec.name for spec in app.host.chats.tool_specs()}
            assert (home.extensions_dir / NOTES / "loca.json").is_file()

    async def test_the_review_shows_each_permission_with_its_reason_and_d_declines(
            self, make_app, until, home, workdir) -> None:
        write_extension(workdir / "foo")
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_screen(pilot, until)
            before = tree(home.root)
            await pilot.press("i")
            await until_screen(pilot, SourcePromptScreen)
            await pilot.press(*"foo", "enter")  # relative to the working folder
            shown = await review(pilot, until)
            (view,) = shown.query(ToolView)
            lines = text_of(view)
            assert "net example.com:443" in lines and "Fetch the page you ask for." in lines
            assert "read $home/Documents" in lines and "Read the notes you point at." in lines
            await pilot.press("d")
            await settle(pilot, until, screen)
            assert app.screen is screen
            assert message(screen) == f"{FOO} was not installed."
            assert FOO not in listed(screen)
            assert tree(home.root) == before  # the staged files are gone too

    async def test_a_bad_source_is_a_message_not_a_crash(self, make_app, until, home,
                                                        workdir) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_screen(pilot, until)
            await pilot.press("i")
            await until_screen(pilot, SourcePromptScreen)
            await pilot.press("enter")  # nothing typed: the prompt stays and says so
            assert isinstance(app.screen, SourcePromptScreen)
            await pilot.press(*"no/such/folder", "enter")
            await settle(pilot, until, screen)
            assert app.screen is screen
            assert message(screen) == (f"{workdir / 'no' / 'such' / 'folder'}: does not exist "
                                       "(for a package on the npm registry, write "
                                       "npm:no/such/folder)")
            assert "-error" in screen.query_one("#extensions-message").classes
            await pilot.press("i")
            await until_screen(pilot, SourcePromptScreen)
            await pilot.press("escape")
            assert app.screen is screen


# --- updating, removing, trusting -------------------------------------------------------

class TestChanges:
    async def test_update_shows_the_widened_permission(self, make_app, until, home,
                                                       workdir) -> None:
        app = make_app([])
        app.host.extensions.install(str(write_extension(workdir / "foo")), yes)
        wider = {**DEFAULT_PERMISSIONS,
                 "net": [{"host": "*", "ports": [443], "reason": "Fetch any page."}]}
        # The recorded source is the folder: the new version is written over it.
        write_extension(workdir / "foo", version="2.0.0", tools=[tool("foo", wider)])
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_screen(pilot, until)
            await select(pilot, screen, FOO)
            await pilot.press("u")
            shown = await review(pilot, until)
            lines = text_of(shown.query_one(PlanView))
            assert f"{FOO} 1.0.0 → 2.0.0" in lines
            assert "widened: foo: net example.com:443 -> *:443" in lines
            await pilot.press("a")
            await settle(pilot, until, screen)
            assert message(screen) == f"Updated {FOO} to 2.0.0."
            assert app.host.extensions.get(FOO).version == "2.0.0"

    async def test_remove_asks_first(self, make_app, until, home, workdir) -> None:
        app = make_app([])
        app.host.extensions.install(str(NOTES_TS), yes)
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_screen(pilot, until)
            await until(pilot, lambda: NOTES in listed(screen))
            assert "add_note" in {t.name for t in app.host.registry.available()}
            await select(pilot, screen, NOTES)
            await pilot.press("r")
            await until_screen(pilot, ConfirmScreen)
            await pilot.press("n")
            assert app.screen is screen and message(screen) == f"{NOTES} was not removed."
            await pilot.press("r")
            await until_screen(pilot, ConfirmScreen)
            await pilot.press("y")
            await settle(pilot, until, screen)
            await until(pilot, lambda: NOTES not in listed(screen))
            assert message(screen) == f"Removed {NOTES}."
            assert "add_note" not in {t.name for t in app.host.registry.available()}
            assert not (home.extensions_dir / NOTES).exists()

    async def test_the_builtin_offers_neither_update_nor_remove(self, make_app, until,
                                                                home) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_screen(pilot, until)
            await select(pilot, screen, "builtin")
            assert screen.check_action("remove", ()) is None
            assert screen.check_action("update", ()) is None
            assert screen.check_action("trust", ()) is None
            await pilot.press("r", "u", "t")
            await until_shown(pilot, lambda: app.screen is screen and not screen.working)
            assert listed(screen) == {"builtin": "ok"}

    async def test_a_tampered_extension_is_held_and_t_trusts_it(self, make_app, until, home,
                                                               workdir) -> None:
        app = make_app([])
        app.host.extensions.install(str(write_extension(workdir / "foo")), yes)
        main = home.extensions_dir / FOO / "main.py"
        main.write_text(main.read_text() + "# changed\n")
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_screen(pilot, until)
            assert listed(screen)[FOO] == "held"
            assert "foo" not in {t.name for t in app.host.registry.available()}
            await select(pilot, screen, FOO)
            detail = screen.query_one(ExtensionDetail)
            await until(pilot, lambda: "held: files changed" in text_of(detail))
            assert "files changed since you approved it: main.py" in text_of(detail)
            assert screen.check_action("trust", ()) is True
            await pilot.press("t")
            shown = await review(pilot, until)
            lines = text_of(shown.query_one(PlanView))
            assert "Files changed since you approved it: main.py" in lines
            assert "no change in tools, permissions or hooks" in lines
            await pilot.press("a")
            await settle(pilot, until, screen)
            await until(pilot, lambda: listed(screen)[FOO] == "ok")
            assert message(screen) == f"Trusted {FOO}: its tools are offered again."
            assert "foo" in {t.name for t in app.host.registry.available()}
            assert screen.check_action("trust", ()) is None

    async def test_declining_a_trust_keeps_it_held(self, make_app, until, home, workdir) -> None:
        app = make_app([])
        app.host.extensions.install(str(write_extension(workdir / "foo")), yes)
        main = home.extensions_dir / FOO / "main.py"
        main.write_text(main.read_text() + "# changed\n")
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_screen(pilot, until)
            await select(pilot, screen, FOO)
            await pilot.press("t")
            await review(pilot, until)
            await pilot.press("escape")
            await settle(pilot, until, screen)
            assert message(screen) == f"{FOO} was not trusted; it stays held."
            assert app.host.extensions.get(FOO).state == "held"


# --- the marketplace -----------------------------------------------------------------------

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


@pytest.fixture
def refusing_registry(home: Home, workdir: Path) -> Iterator[str]:
    """An ``extensions.registry`` that refuses every connection at once: a loopback port
    bound and not listening (the default registry, on the network, could answer, refuse
    or keep a search waiting, as the network goes)."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"
        set_setting(home, workdir, "extensions.registry", url)
        yield url


class TestMarketplace:
    async def test_search_then_install_a_result(self, make_app, until, registry, workdir,
                                                home) -> None:
        tarball = make_tgz(write_extension(workdir / "pkg", version="1.2.0"), workdir / "foo.tgz")
        registry.publish(FOO, {"1.2.0": tarball.read_bytes()}, latest="1.2.0",
                         description="Foo things.")
        registry.search_results = {
            "loca-extension": [{"name": FOO, "version": "1.2.0", "description": "Foo things."}],
            "workbench-extension": [{"name": "wb-bar", "version": "0.1.0",
                                     "description": "Bar things."}]}
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_screen(pilot, until)
            await pilot.press("2")
            await pilot.press("enter")  # no words: every extension
            results = screen.query_one(PackageList)
            # (Before the search, the list holds the add-ons shipped with workbench.)
            await until(pilot, lambda: [r.name for r in results.results] == [FOO, "wb-bar"])
            assert [(r.name, r.version, r.description) for r in results.results] == [
                (FOO, "1.2.0", "Foo things."), ("wb-bar", "0.1.0", "Bar things.")]
            assert screen.focused is results
            assert "2 extensions found" in str(screen.query_one("#market-message").content)
            await pilot.press("enter")
            shown = await review(pilot, until)
            assert f"from npm:{FOO}@1.2.0" in text_of(shown.query_one(PlanView))
            await pilot.press("a")
            await settle(pilot, until, screen)
            await until(pilot, lambda: FOO in listed(screen))
            assert screen.active_tab == "installed"
            assert screen.selected is not None and screen.selected.name == FOO
            assert f"/{FOO}/-/{FOO}-1.2.0.tgz" in registry.requests

    async def test_the_shipped_addons_are_listed_and_install_by_id(self, make_app, until, home) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_screen(pilot, until)
            await pilot.press("2")
            results = screen.query_one(PackageList)
            await until(pilot, lambda: [r.name for r in results.results] == ["calendar", "contacts"])
            assert "add-ons shipped with workbench" in str(screen.query_one("#market-message").content)
            screen.set_focus(results)
            await pilot.press("enter")
            shown = await review(pilot, until)
            assert "from addon:calendar" in text_of(shown.query_one(PlanView))
            await pilot.press("a")
            await settle(pilot, until, screen)
            await until(pilot, lambda: "calendar" in listed(screen))

    async def test_words_narrow_the_search(self, make_app, until, registry, home) -> None:
        registry.search_results = {"loca-extension": [
            {"name": FOO, "version": "1.2.0", "description": "Foo things."},
            {"name": "loca-extension-weather", "version": "3.0.0", "description": "Forecasts."}]}
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_screen(pilot, until)
            await pilot.press("2")
            await until(pilot, lambda: getattr(screen.focused, "id", None) == "market-search")
            await pilot.press(*"weather", "enter")
            results = screen.query_one(PackageList)
            await until(pilot, lambda: len(results.results) == 1)
            assert results.results[0].name == "loca-extension-weather"
            await pilot.press("escape", "ctrl+e")
            await until(pilot, lambda: app.screen is screen)
            screen.set_focus(screen.query_one("#market-search"))
            await until(pilot, lambda: getattr(screen.focused, "id", None) == "market-search")
            await pilot.press(*"nothing", "enter")
            await until(pilot, lambda: "No extensions found." in
                        str(screen.query_one("#market-message").content))
            assert results.results == []

    async def test_an_unreachable_registry_is_a_message(self, make_app, until, home,
                                                        refusing_registry) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_screen(pilot, until)
            await pilot.press("2")
            await until(pilot, lambda: getattr(screen.focused, "id", None) == "market-search")
            await pilot.press(*"weather", "enter")
            note = screen.query_one("#market-message", Static)
            await until(pilot, lambda: "-error" in note.classes)
            assert str(note.content).startswith("The search failed: ")
            assert "cannot reach the registry" in str(note.content)
            assert app.is_running and app.screen is screen


# --- status ----------------------------------------------------------------------------------

class TestStatus:
    async def test_the_status_tab_shows_a_conflict_and_a_broken_extension(
            self, make_app, until, home, workdir) -> None:
        app = make_app([])
        for name, tools in (("alpha", ["shared_tool", "alpha_only"]), ("beta", ["shared_tool"]),
                            ("gamma", ["gamma_tool"])):
            source = write_extension(workdir / name, name=name, tools=[tool(t) for t in tools])
            app.host.extensions.install(str(source), yes)
        (home.extensions_dir / "gamma" / "loca.json").write_text('{"name": "gamma", "tools": 3}')
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_screen(pilot, until)
            assert listed(screen) == {"alpha": "ok", "beta": "ok", "builtin": "ok",
                                      "gamma": "broken"}
            await pilot.press("3")
            view = screen.query_one(StatusView)
            await until(pilot, lambda: screen.focused is view)
            await until_shown(pilot, lambda: view.report is not None
                              and "3 loaded" in text_of(view))
            lines = text_of(view)
            assert "3 loaded · 1 load error · 1 conflict" in lines
            assert "shared_tool: alpha (extension) wins; shadowed: beta (extension)" in lines
            assert "broken  gamma  " in lines
            assert "invalid manifest: /displayName: missing required field" in lines
            assert screen.check_action("install", ()) is False  # keys of the Installed tab


# --- pieces of the drawing ------------------------------------------------------------------

class TestDrawing:
    def test_dependencies_and_what_an_update_changes_in_them(self) -> None:
        assert list(dependency_widgets({"name": "foo"})) == []  # a plan that lists none
        packages = [{"name": "zod", "version": "3.23.8", "source": "npm", "direct": True},
                    {"name": "tslib", "version": "2.6.0", "source": "npm", "direct": False}]
        previous = [{"name": "zod", "version": "3.22.0", "source": "npm", "direct": True},
                    {"name": "left-pad", "version": "1.3.0", "source": "npm", "direct": True}]
        lines = [str(w.content) for w in dependency_widgets(
            {"dependencies": packages, "previous_dependencies": previous})]
        assert lines == ["Dependencies", "zod 3.23.8 (npm)",
                         "tslib 2.6.0 (npm) — needed by another package",
                         "changed since the installed version:", "  + tslib 2.6.0 (npm)",
                         "  - left-pad 1.3.0 (npm)", "  ~ zod 3.22.0 → 3.23.8"]
        assert [str(w.content) for w in dependency_widgets({"dependencies": []})] == [
            "Dependencies", "none"]

    def test_sizes_and_paths_for_a_person(self, tmp_path: Path) -> None:
        assert [file_size(n) for n in (0, 999, 1000, 4210, 1_300_000, 5_000_000_000)] == [
            "0 B", "999 B", "1.0 kB", "4.2 kB", "1.3 MB", "5.0 GB"]
        assert shown_path(tmp_path / "notes") == "~/notes"  # HOME is the test's folder
        assert shown_path(tmp_path) == "~"
        assert shown_path("/elsewhere/x") == "/elsewhere/x"
        assert shown_path("npm:loca-extension-foo") == "npm:loca-extension-foo"


# --- a project's own extensions, hooks that rewrite ----------------------------------------

class TestProjectAndHooks:
    async def test_a_project_extension_is_held_until_t_reviews_and_trusts_it(
            self, make_app, until, home, workdir) -> None:
        from workbench.config.trust import trust_project

        (workdir / ".workbench").mkdir()
        (workdir / ".workbench" / "config.toml").write_text("")
        write_extension(workdir / ".workbench" / "extensions" / "local", name="local-tool")
        trust_project(home, workdir)
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_screen(pilot, until)
            await until(pilot, lambda: listed(screen).get("local-tool") == "held")
            assert "foo" not in {t.name for t in app.host.registry.available()}
            await select(pilot, screen, "local-tool")
            assert screen.selected.origin == f"project {workdir.resolve()}"
            assert screen.check_action("trust", ()) is True
            assert screen.check_action("remove", ()) is None
            await pilot.press("t")
            shown = await review(pilot, until)
            lines = text_of(shown.query_one(PlanView))
            assert "foo" in lines
            await pilot.press("a")
            await settle(pilot, until, screen)
            await until(pilot, lambda: listed(screen).get("local-tool") == "ok")
            assert message(screen) == "Trusted local-tool: its tools run in this project."
            assert "foo" in {t.name for t in app.host.registry.available()}

    async def test_installing_a_hook_asks_apart_whether_it_may_rewrite_other_tools(
            self, make_app, until, home, workdir) -> None:
        folder = write_extension(workdir / "hooked", manifest={"hooks": {"on_tool_call": "foo"}})
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_screen(pilot, until)
            screen._install_from(str(folder))
            shown = await review(pilot, until)
            assert "can block any call" in text_of(shown.query_one(PlanView))
            await pilot.press("a")
            await until_screen(pilot, ConfirmScreen)
            assert "rewrite the arguments of other" in app.screen.question
            await pilot.press("n")  # the default: no
            await settle(pilot, until, screen)
            await until(pilot, lambda: listed(screen).get(FOO) == "ok")
            explained = app.host.grants.explain(f"hook:{FOO}")
            assert explained[0]["state"] == "not granted"
