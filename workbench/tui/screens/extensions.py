"""The Extensions screen: what is installed, the marketplace, and the status report.

Every change goes through the ``Host`` (``host.extensions``, ``workbench.core.extension_service``), the same
methods ``workbench ext …`` uses: the screen asks for a plan in a thread, shows it in
a ``ReviewScreen``, and installs, updates or trusts it only after the person accepts
(a declined plan's files are discarded). Removing asks first in a ``ConfirmScreen``.
Refusals (``WorkbenchError``) are shown in the message line; nothing here blocks the
event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, Label, Static, TabbedContent, TabPane, Tabs

from workbench.core.host import Host
from workbench.core.status import StatusReport
from workbench.errors import WorkbenchError
from workbench.core.extension_views import AddonRow, InstalledExtension, InstallPlan, SearchResult
from workbench.tui.screens.changes import ChangesInThread
from workbench.tui.screens.confirm import ConfirmScreen
from workbench.tui.screens.review import ReviewScreen
from workbench.tui.screens.source_prompt import SourcePromptScreen
from workbench.tui.widgets.extension_detail import ExtensionDetail
from workbench.tui.widgets.extension_list import ExtensionList
from workbench.tui.widgets.package_list import PackageList
from workbench.tui.widgets.status_view import StatusView

SEARCH_LIMIT = 50
"""The most packages one search lists."""

MARKET_HINT = ("Type words and press Enter to search the registry for extensions "
               "(an empty search lists them all); Enter on a result reviews it.")

ADDONS_HINT = ("The add-ons shipped with workbench are below: Enter on one reviews it. Type "
               "words and press Enter to search the registry for other extensions.")

ADDON_KEYWORD = "workbench-addon"
"""Marks a Marketplace row that is a shipped add-on (installed by its id)."""


def addon_results(rows: list[AddonRow]) -> list[SearchResult]:
    """The shipped add-ons as Marketplace rows."""
    return [SearchResult(name=row.id, version="installed" if row.installed else "shipped",
                         description=f"{row.display_name} — {row.description}",
                         keywords=(ADDON_KEYWORD,)) for row in rows]


def rewrite_question(name: str) -> ConfirmScreen:
    """Whether an extension's on_tool_call hook may rewrite other extensions' calls
    (the ``hooks.rewrite`` grant), asked after its review; no is the default."""
    return ConfirmScreen(
        "Hook rewrites", f"Let {name}'s on_tool_call hook rewrite the arguments of other "
        "extensions' tools?",
        "Without this, a call of another extension's tool whose arguments the hook rewrites "
        "is refused. Its own tools' arguments it may always rewrite.", yes="allow")


def _yes(_plan: InstallPlan) -> bool:
    """The approval of a plan the person already accepted in the review."""
    return True


class ExtensionsScreen(ChangesInThread, Screen):
    """Installed extensions, the marketplace and the status report, in three tabs.

    Args:
        host: The host whose extensions these are.

    | Key | Action |
    | --- | --- |
    | 1, 2, 3 | Installed, Marketplace, Status |
    | i | Install from a folder, an archive or npm:NAME |
    | u | Update the selected extension |
    | r | Remove the selected extension (asks first) |
    | t | Trust the selected held extension (shows what changed) |
    | escape, ctrl+e | Back to the chat |
    """

    CSS_PATH = "extensions.tcss"
    shell_name = "extensions"
    """The name the app opens it by."""
    BINDINGS = [
        Binding("escape", "close", "Back"),
        Binding("ctrl+e", "close", "Back", show=False),
        Binding("i", "install", "Install"),
        Binding("u", "update", "Update"),
        Binding("r", "remove", "Remove"),
        Binding("t", "trust", "Trust"),
        Binding("1", "show_tab('installed')", "Installed", show=False),
        Binding("2", "show_tab('marketplace')", "Marketplace", show=False),
        Binding("3", "show_tab('status')", "Status", show=False),
    ]

    working: reactive[str] = reactive("")
    """What the screen is doing in the background (``Installing foo``); empty when idle."""

    def __init__(self, host: Host) -> None:
        super().__init__(id="extensions")
        self.host = host
        self._reads = 0
        """How many reads were started: only the latest one's answer is shown."""
        self._asking = False
        """Whether one of this screen's own dialogs is open (closing it is no reason to
        read everything again)."""
        self._searched = False
        """Whether the Marketplace shows a search's results (not the shipped add-ons)."""

    def compose(self) -> ComposeResult:
        with Horizontal(id="extensions-header"):
            yield Label(Content.assemble(("workbench", "bold"), "  ·  Extensions"),
                        id="extensions-title")
            yield Label("1 2 3 switch tabs", id="extensions-keys")
        with TabbedContent(initial="installed", id="extensions-tabs"):
            with TabPane("Installed", id="installed"):
                with Horizontal(id="installed-body"):
                    yield ExtensionList(id="extension-list")
                    yield ExtensionDetail(id="extension-detail")
            with TabPane("Marketplace", id="marketplace"):
                yield Input(placeholder="Search words, then Enter", id="market-search")
                yield Static(MARKET_HINT, id="market-message")
                yield PackageList(id="market-results")
            with TabPane("Status", id="status"):
                yield StatusView(id="status-view")
        yield Static("", id="extensions-message")
        yield Footer()

    # --- what is shown -------------------------------------------------------------

    @property
    def extension_list(self) -> ExtensionList:
        return self.query_one(ExtensionList)

    @property
    def selected(self) -> InstalledExtension | None:
        """The extension under the Installed list's cursor."""
        return self.extension_list.selected

    @property
    def active_tab(self) -> str:
        return self.query_one(TabbedContent).active

    def say(self, text: str, level: str = "info") -> None:
        """Put ``text`` in the message line; ``level`` is ``info``, ``working``,
        ``success`` or ``error``."""
        message = self.query_one("#extensions-message", Static)
        message.update(Content(text))
        message.set_classes(f"-{level}" if text else "")

    def on_screen_resume(self) -> None:
        if self._asking:
            self._asking = False
        else:
            self.refresh_extensions()

    def ask(self, dialog: Screen[Any], then: Callable[[Any], None]) -> None:
        """Open one of the screen's dialogs; ``then`` gets its answer."""
        self._asking = True
        self.app.push_screen(dialog, then)

    def refresh_extensions(self, select: str | None = None) -> None:
        """Read the installed extensions and the status report again, in a thread;
        then show them, keeping the cursor on ``select`` when given."""
        self._reads += 1
        self._read(self._reads, select)

    @work(thread=True, group="extensions-read")
    def _read(self, read: int, select: str | None) -> None:
        host = self.host
        try:
            host.loading.ensure()
            installed = host.extensions.here()
            report = host.tools.status_report()
            shipped = host.extensions.addons()
        except WorkbenchError as exc:
            self.app.call_from_thread(self.say, str(exc), "error")
            return
        self.app.call_from_thread(self._show_extensions, read, installed, report, select)
        self.app.call_from_thread(self._show_addons, shipped)

    def _show_addons(self, rows: list[AddonRow]) -> None:
        """List the shipped add-ons in the Marketplace until a search shows its results."""
        if not self.is_attached or self._searched or not rows:
            return
        self.query_one(PackageList).show(addon_results(rows))
        self._set_market_message(ADDONS_HINT, "info")

    def _show_extensions(self, read: int, installed: list[InstalledExtension],
                         report: StatusReport, select: str | None) -> None:
        if read != self._reads or not self.is_attached:
            return  # a later read (after a change) is on its way
        self.extension_list.show(installed, select=select)
        self.query_one(ExtensionDetail).empty_text = (
            "No extension selected." if installed
            else "No extensions installed. Press i to install one.")
        self.query_one(StatusView).report = report

    @on(ExtensionList.Highlighted)
    def _show_detail(self, message: ExtensionList.Highlighted) -> None:
        self.query_one(ExtensionDetail).extension = message.extension
        self.refresh_bindings()

    @on(ExtensionList.Chosen)
    def _focus_detail(self) -> None:
        self.query_one(ExtensionDetail).focus()

    # --- tabs --------------------------------------------------------------------

    TAB_FOCUS: ClassVar[dict[str, type[Widget]]] = {
        "installed": ExtensionList, "marketplace": Input, "status": StatusView}
    """The widget that takes the focus when its tab is shown."""

    def action_show_tab(self, tab: str) -> None:
        """Switch to the tab ``tab`` (``installed``, ``marketplace`` or ``status``), and
        give the focus to its widget at once (the next key is for that widget).

        The key goes the way a click on the tab goes, through the tab bar: the bar's own
        message that shows the first tab as the screen opens is then handled before it,
        never after (set on ``TabbedContent`` directly, a key pressed as the screen opens
        was undone by that message a moment later)."""
        tabbed = self.query_one(TabbedContent)
        tabbed.query_one(Tabs).active = tabbed.get_tab(tab).id or ""
        self._focus_tab(tab)

    def _chosen(self, tab: str) -> bool:
        """Whether ``tab`` is the one last chosen (the bar's), shown yet or not."""
        tabbed = self.query_one(TabbedContent)
        return tabbed.query_one(Tabs).active == tabbed.get_tab(tab).id

    def _focus_tab(self, tab: str) -> None:
        """Focus ``tab``'s widget now, unless the focus is in that tab already.

        ``TabbedContent`` shows the tab of a focused widget, a message later: a focus
        given for one tab could then show it again after a newer key chose another.
        Tabs change by the bar alone here, so that message is not sent."""
        pane = self.query_one(TabbedContent).get_pane(tab)
        if self.focused is not None and pane in self.focused.ancestors:
            return
        with self.prevent(TabPane.Focused):
            self.set_focus(self.query_one(self.TAB_FOCUS[tab]))

    @on(TabbedContent.TabActivated)
    def _tab_shown(self, event: TabbedContent.TabActivated) -> None:
        """A tab is shown (by a key, or a click on the bar): its widget takes the focus,
        unless a newer choice is on its way."""
        tab = event.pane.id or "installed"
        if self._chosen(tab):
            self._focus_tab(tab)
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action not in ("install", "update", "remove", "trust"):
            return True
        if not self.query(TabbedContent) or not self.query(ExtensionList):
            return None  # not mounted yet, or no longer (the footer asks meanwhile)
        if self.active_tab != "installed":
            return False
        if self.working:
            return None
        if action == "install":
            return True
        selected = self.selected
        if selected is None or selected.builtin:
            return None
        if action == "trust":
            return True if selected.state == "held" else None
        if selected.origin != "installed":
            return None  # a project's own extension is trusted, never updated or removed here
        return True

    def watch_working(self) -> None:
        self.refresh_bindings()

    def action_close(self) -> None:
        """Back to the chat."""
        self.app.pop_screen()

    # --- installing, updating, trusting: a plan, a review, then the change -------------

    def action_install(self) -> None:
        """Ask where from, then review what it brings."""
        self.ask(SourcePromptScreen(), self._install_from)

    def _install_from(self, source: str | None) -> None:
        if source:
            self._start(f"Reading {source}", lambda: self.host.extensions.plan_install(source), self._review)

    def action_update(self) -> None:
        """Fetch the selected extension's new version and review the difference."""
        selected = self.selected
        if selected is not None:
            self._start(f"Fetching {selected.name} from {selected.source}",
                        lambda: self.host.extensions.plan_update(selected.name), self._review)

    def action_trust(self) -> None:
        """Show what changed in the selected held extension and ask to trust it."""
        selected = self.selected
        if selected is None:
            return
        if selected.origin != "installed":
            folder = selected.path
            self._start(f"Checking {selected.name}'s files",
                        lambda: self.host.extensions.plan_project_trust(folder),
                        lambda plan: self._review(plan, project=True))
            return
        self._start(f"Checking {selected.name}'s files",
                    lambda: self.host.extensions.plan_trust(selected.name), self._review)

    def _review(self, plan: InstallPlan, project: bool = False) -> None:
        self.say("")
        self.ask(ReviewScreen(plan), lambda accept: self._decided(plan, bool(accept), project))

    def _trust_project(self, plan: InstallPlan, allow_rewrite: bool | None) -> None:
        host, name = self.host, plan.name

        def trust() -> InstallPlan:
            done = host.extensions.trust_project(plan.folder, digest=plan.digest)
            if allow_rewrite is not None:
                host.extensions.set_hook_rewrite(f"project:{plan.folder}", allow_rewrite)
            return done

        self._start(f"Trusting {name}", trust,
                    lambda _: self._changed(name, f"Trusted {name}: its tools run in this "
                                                  "project."))

    def _decided(self, plan: InstallPlan, accept: bool, project: bool = False) -> None:
        host, name = self.host, plan.name
        if project:
            if not accept:
                self.say(f"{name} was not trusted; its code does not run.")
            elif plan.rewrites_calls:
                self.ask(rewrite_question(name),
                         lambda allow: self._trust_project(plan, bool(allow)))
            else:
                self._trust_project(plan, None)
            return
        if plan.action == "trust":
            if accept:
                self._start(f"Trusting {name}",
                            lambda: host.extensions.trust(name, digest=plan.digest),
                            lambda _: self._changed(name, f"Trusted {name}: its tools are "
                                                          "offered again."))
            else:
                self.say(f"{name} was not trusted; it stays held.")
            return
        verb = "installed" if plan.action == "install" else "updated"
        if not accept:
            self._start(f"Discarding {name}", lambda: host.extensions.discard_plan(plan),
                        lambda _: self.say(f"{name} was not {verb}."))
            return
        if plan.action == "install":
            if plan.rewrites_calls:
                self.ask(rewrite_question(name), lambda allow: self._install(plan, bool(allow)))
            else:
                self._install(plan, False)
        else:
            self._start(f"Updating {name}", lambda: host.extensions.update(name, _yes, source=plan),
                        lambda found: self._changed(found.name, f"Updated {found.name} to "
                                                                f"{found.version}."))

    def _install(self, plan: InstallPlan, allow_rewrite: bool) -> None:
        host = self.host

        def install() -> InstalledExtension:
            found = host.extensions.install(plan, _yes)
            if allow_rewrite:
                host.extensions.set_hook_rewrite(found.name, True)
            return found

        self._start(f"Installing {plan.name}", install,
                    lambda found: self._changed(found.name, f"Installed {found.name} "
                                                            f"{found.version}."))

    def _changed(self, name: str | None, text: str) -> None:
        self.say(text, "success")
        if name is not None:
            self.action_show_tab("installed")
        self.refresh_extensions(select=name)

    # --- removing --------------------------------------------------------------------

    def action_remove(self) -> None:
        """Ask, then remove the selected extension."""
        selected = self.selected
        if selected is None:
            return
        question = ConfirmScreen(
            "Remove extension", f"Remove {selected.display_name} ({selected.name})?",
            "Its tools, its private database and the knowledge and skills it shipped go "
            "with it.", yes="remove")
        self.ask(question, lambda yes: self._remove(selected.name, bool(yes)))

    def _remove(self, name: str, yes: bool) -> None:
        if not yes:
            self.say(f"{name} was not removed.")
            return
        self._start(f"Removing {name}", lambda: self.host.extensions.remove(name),
                    lambda _: self._changed(None, f"Removed {name}."))

    # --- the marketplace -------------------------------------------------------------

    @on(Input.Submitted, "#market-search")
    def search(self, event: Input.Submitted) -> None:
        """Search the registry for the words typed."""
        event.stop()
        words = event.value.split()
        self._searched = True
        self._set_market_message("Searching…", "working")
        self._search(words)

    @work(thread=True, exclusive=True, group="extensions-search")
    def _search(self, words: list[str]) -> None:
        try:
            results = self.host.extensions.search(words, SEARCH_LIMIT)
        except WorkbenchError as exc:
            self.app.call_from_thread(self._search_failed, exc)
            return
        self.app.call_from_thread(self._show_results, results)

    def _set_market_message(self, text: str, level: str) -> None:
        message = self.query_one("#market-message", Static)
        message.update(Content(text))
        message.set_classes(f"-{level}")

    def _search_failed(self, error: WorkbenchError) -> None:
        if self.is_attached:
            self.query_one(PackageList).show([])
            self._set_market_message(f"The search failed: {error}", "error")

    def _show_results(self, results: list[SearchResult]) -> None:
        if not self.is_attached:
            return
        found = self.query_one(PackageList)
        found.show(results)
        if not results:
            self._set_market_message("No extensions found.", "info")
            return
        count = f"{len(results)} extension{'' if len(results) == 1 else 's'} found"
        self._set_market_message(f"{count}; Enter on one reviews it before installing.", "info")
        if self._chosen("marketplace"):  # results that come after a switch leave the tab be
            with self.prevent(TabPane.Focused):
                self.set_focus(found)

    @on(PackageList.Chosen)
    def _install_package(self, message: PackageList.Chosen) -> None:
        result = message.result
        if ADDON_KEYWORD in result.keywords:
            source = f"addon:{result.name}"
        else:
            source = f"npm:{result.name}" + (f"@{result.version}" if result.version else "")
        self._start(f"Fetching {source}", lambda: self.host.extensions.plan_install(source), self._review)
