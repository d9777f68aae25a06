"""The Textual app: key bindings, the screens it opens, themes, and the one bridge from
core events to screens.

Started by the CLI without a host (``open_later``), the app draws its first frame —
the chat's prompt box, ``StartingScreen`` — before the core is even imported, opens the
host in a thread and then puts the chat in its place, with what was typed meanwhile.
This module therefore imports the core and the chat only where they are used.

Everything the app shows comes from the ``Host`` it is given; layout lives in the
screens and behaviour in the core. The app also runs this home's scheduler (the
``Host``'s supervisor) while it is open, unless another process holds it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from textual import work
from textual.app import App, SystemCommand, active_app
from textual.binding import Binding
from textual.command import CommandPalette
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.theme import Theme

from workbench.errors import WorkbenchError
from workbench.events import (
    Event,
    ExtensionStatusChanged,
    Notice,
    NotificationPosted,
    ProcessStateChanged,
    ScheduleFired,
    ScheduleRunEnded,
)
from workbench.tui.core_event import CoreEvent
from workbench.tui.keys import key_rows
from workbench.tui.responder import TuiResponder
from workbench.tui.safe_rendering import guard_rendering
from workbench.tui.screens.starting import StartingScreen
from workbench.tui.themes import DEFAULT_THEME, THEMES_DIR, load_themes

if TYPE_CHECKING:
    from workbench.core.host import Host
    from workbench.tui.screens.chat import ChatScreen

HostOpener = Callable[[TuiResponder], "Host"]
"""Opens the host the app answers for (in a thread), given the app's responder."""

SHELL_EVENTS = (NotificationPosted, ProcessStateChanged, ScheduleFired, ScheduleRunEnded,
                ExtensionStatusChanged)
"""The core events the app's own screens follow (the chat gets every event)."""

UNREAD_EVERY_S = 15.0
"""How often the unread notifications are counted again, for those posted elsewhere."""

SUPERVISOR_STOP_S = 10.0
"""How long closing the app waits for the scheduler to let its runs end and its lock go."""


class Place(NamedTuple):
    """A screen the app opens by name: what the palette and the help call it."""

    title: str
    help: str


PLACES: dict[str, Place] = {
    "tools": Place("Tools in this chat", "Switch extensions and MCP servers on or off for this "
                   "chat; see each tool's grants and revoke them"),
    "notifications": Place("Notifications", "Cards, notices and failed background runs; "
                           "mark them read"),
    "extensions": Place("Extensions", "Install, update, remove and trust extensions; the "
                        "marketplace; their status"),
    "mcp": Place("MCP servers", "The MCP servers with their state and tools"),
    "pages": Place("Pages", "Extensions' pages: cards their own tools serve, with forms and "
                   "actions"),
    "plugins": Place("Plugins", "The installed plugins, their running instances (stop them) "
                     "and their panes"),
    "tasks": Place("Tasks", "Scheduled prompts: next times, runs and failures; pause, run, "
                   "edit, delete"),
    "settings": Place("Settings", "The global and project config, and trusting the project's"),
    "help": Place("Help", "The keys of this screen and of every screen"),
}


def extensions_screen() -> Screen:
    """The Extensions screen, built (and its module imported) on first use."""
    from workbench.tui.screens.extensions import ExtensionsScreen

    app = active_app.get()
    assert isinstance(app, WorkbenchApp)
    return ExtensionsScreen(app.host)


class ShellEvent(Message):
    """A core event the app itself follows (unread count) and passes to its screens."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event


class HostOpened(Message):
    """The host the app started without is open (posted from the thread that opened it)."""

    def __init__(self, host: Host) -> None:
        super().__init__()
        self.host = host


class WorkbenchApp(App):
    """The workbench TUI.

    Args:
        host: The open host; the caller closes it after the app has exited. None with
            ``open_host``.
        responder: The responder the host was opened with; a new one is made (and
            given to the host) when omitted.
        themes_dir: Where the theme files are.
        scheduler: Run this home's scheduler while the app is open (when no other
            process holds it).
        open_host: Without ``host``: opens it in a thread once the first frame is
            drawn. The caller closes it after the app has exited (``wait_opened``).
    """

    TITLE = "workbench"
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("ctrl+e", "open('extensions')", "Extensions", priority=True),
        Binding("ctrl+t", "open('tools')", "Tools", show=False, priority=True),
        Binding("ctrl+n", "open('notifications')", "Notifications", show=False, priority=True),
        Binding("f2", "open('tasks')", "Tasks", show=False, priority=True),
        Binding("f3", "open('mcp')", "MCP servers", show=False, priority=True),
        Binding("f4", "open('settings')", "Settings", show=False, priority=True),
        Binding("f5", "open('pages')", "Pages", show=False, priority=True),
        Binding("f6", "open('plugins')", "Plugins", show=False, priority=True),
        Binding("f1", "open('help')", "Help", show=False, priority=True),
        Binding("question_mark", "open('help')", "Help", show=False),
    ]
    SCREENS = {"extensions": extensions_screen}

    unread: reactive[int] = reactive(0)
    """How many notifications are unread; shown in the footer when there are some."""

    def __init__(self, host: Host | None, responder: TuiResponder | None = None, *,
                 themes_dir: Path = THEMES_DIR, scheduler: bool = True,
                 open_host: HostOpener | None = None) -> None:
        super().__init__()
        guard_rendering()  # no escape sequence from outside reaches the terminal
        if (host is None) == (open_host is None):
            raise ValueError("give the app a host or a way to open one, not both")
        self._host: Host | None = None
        self._open_host = open_host
        self._opened = threading.Event()
        """Set once ``open_host`` has ended (opened the host, or failed to)."""
        self._opened_host: Host | None = None
        self._opening_error: BaseException | None = None
        self.responder = responder or TuiResponder()
        self.responder.bind(self)
        self._startup_notices = self._register_themes(themes_dir)
        self._unsubscribe: list[Callable[[], None]] = []
        self._run_scheduler = scheduler
        self._scheduler_stop: asyncio.Event | None = None
        self._scheduler_task: asyncio.Future[None] | None = None
        self._counts = 0
        self._starting: StartingScreen | None = None
        self._open_later: str | None = None
        """The screen asked for (by name) before the chat was there, opened once it is."""
        self.chat: ChatScreen
        """The chat screen, pushed at mount (once the host is open)."""
        if host is not None:
            self._attach(host)
        self._remembered_theme = self.theme

    @property
    def host(self) -> Host:
        """The open host (an app started without one: once ``HostOpened`` is handled)."""
        if self._host is None:
            raise RuntimeError("the host is not open yet")
        return self._host

    def _attach(self, host: Host) -> None:
        self._host = host
        host.answer_with(self.responder)
        self._startup_notices += self._choose_theme()

    def _register_themes(self, folder: Path) -> list[str]:
        """Register the theme files and draw with the default theme until the config
        is read; returns problems to show."""
        themes, problems = load_themes(folder)
        for theme in themes:
            self.register_theme(theme)
        self.theme = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
        return problems

    def _choose_theme(self) -> list[str]:
        """Pick the configured theme; returns problems to show."""
        wanted = self.host.config.settings.theme
        if wanted in self.available_themes:
            self.theme = wanted
            return []
        fallback = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
        self.theme = fallback
        return [f"unknown theme {wanted!r}; using {fallback}. "
                f"Known: {', '.join(sorted(self.available_themes))}"]

    async def on_mount(self) -> None:
        if self._host is None:
            # The first frame: the prompt box, before the core is imported.
            self._starting = StartingScreen()
            await self.push_screen(self._starting)
            # Once it is drawn: the thread's imports would hold the interpreter from
            # the drawing of it otherwise.
            self.call_after_refresh(self._open_in_thread)
        else:
            await self._start_chat()

    @work(thread=True, group="opening")
    def _open_in_thread(self) -> None:
        """Open the host, check its model and import the chat, off the UI loop; the
        app exits when that fails (``raise_opening_error`` says why)."""
        assert self._open_host is not None
        try:
            host = self._open_host(self.responder)
            try:
                # An unknown model or a broken model file ends the app here, rather
                # than at the first prompt.
                host.default_model.provider()
                import workbench.tui.screens.chat  # noqa: F401 - its imports, off the loop
            except BaseException:
                host.close()
                raise
        except BaseException as exc:  # noqa: BLE001 - said once the app has exited
            self._opening_error = exc
            self._opened.set()
            try:
                self.call_from_thread(partial(self.exit, return_code=1))
            except RuntimeError:  # the app has already ended
                pass
            return
        self._opened_host = host
        self._opened.set()
        self.post_message(HostOpened(host))

    def wait_opened(self) -> Host | None:
        """After the app has exited: the host ``open_host`` opened, once it has ended;
        None when it failed (or the app was given its host). The caller closes it."""
        if self._open_host is None:
            return None
        self._opened.wait()
        return self._opened_host

    def raise_opening_error(self) -> None:
        """Raise what opening the host failed with, if it did."""
        if self._opening_error is not None:
            raise self._opening_error

    async def on_host_opened(self, message: HostOpened) -> None:
        self._attach(message.host)
        self._remembered_theme = self.theme
        await self._start_chat()

    async def _start_chat(self) -> None:
        from workbench.tui.screens.chat import ChatScreen

        chat = self.chat = ChatScreen(self.host)
        starting, self._starting = self._starting, None
        sent: list[str] = []
        later: list[str] = []
        if starting is None:
            # Pushed rather than returned from get_default_screen, which would skip
            # loading the screen's CSS_PATH; awaited so that the chat is ready (and
            # focused) before the first key arrives.
            await self.push_screen(chat)
        else:
            # Keys wait in the app's queue while this runs: none is lost between
            # the two screens.
            while self.screen is not starting:  # the palette, opened meanwhile
                await self.pop_screen()
            text, selection = starting.prompt_input.text, starting.prompt_input.selection
            await self.switch_screen(chat)
            if text:
                chat.prompt_input.load_text(text)
                chat.prompt_input.selection = selection
            sent, later = starting.sent, starting.later
        # The event bridge. Listeners run where the core publishes: mostly on this
        # loop, but a tool running in a worker thread reports progress from that
        # thread, and post_message is safe to call from any thread.
        bus = self.host.bus
        self._unsubscribe = [
            bus.subscribe(lambda event: chat.post_message(CoreEvent(event))),
            bus.subscribe(lambda event: self.post_message(ShellEvent(event))
                          if isinstance(event, SHELL_EVENTS) else None)]
        for problem in self._startup_notices:
            self.post_core_event(Notice(level="warning", message=problem))
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        # After the first frame: loading takes the interpreter (imports, manifests) from
        # the drawing of it otherwise.
        self.call_after_refresh(self.load_extensions)
        self.count_unread()
        # Runs of a scheduler in another process (a daemon) post their notifications
        # there: count again now and then to see them too.
        self.set_interval(UNREAD_EVERY_S, self.count_unread)
        if sent:
            chat.send_in_order(sent)
        for action in later:
            await chat.run_action(action)
        name, self._open_later = self._open_later, None
        if name is not None:
            await self.action_open(name)

    @work(thread=True, group="startup")
    def load_extensions(self) -> None:
        """Load the extensions after the first frame, then show the setup notices and
        start the scheduler."""
        self.host.loading.ensure()
        self.call_from_thread(self.host.loading.announce, self.host.default_model.notice)
        if self._run_scheduler:
            self.call_from_thread(self.run_scheduler)

    # --- the screens -------------------------------------------------------------

    def _shell_name(self, screen: Screen) -> str | None:
        return getattr(screen, "shell_name", None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "open":
            if not self.screen_stack:
                return False  # starting or closing: no screen to open over
            top = self.screen
            if isinstance(top, CommandPalette) and len(self.screen_stack) > 1:
                top = self.screen_stack[-2]  # the palette lists what runs once it closes
            if top is self._starting:
                return True  # opened once the chat is there
            if self._shell_name(top) == "help":
                return False  # the help's own keys close it
            if parameters and parameters[0] == "help":
                return True
            if parameters and self._shell_name(top) == parameters[0]:
                return False  # the screen's own binding for the key takes it back
            # From the chat, or from one of these screens to another; never over a
            # question (a permission, a form, a confirmation) waiting for its answer.
            return top is getattr(self, "chat", None) or self._shell_name(top) is not None
        return True

    async def action_open(self, name: str) -> None:
        """Open one of the app's screens over the chat (from another of them, in its
        place); on its own screen the key is the screen's, and goes back."""
        top = self.screen
        if self._host is None:
            self._open_later = name
            return
        if name == "help":
            from workbench.tui.screens.help import HelpScreen

            self.push_screen(HelpScreen(self._title_of(top), key_rows(top, self.describe_action)))
            return
        while self.screen is not self.chat and self._shell_name(self.screen) is not None:
            await self.pop_screen()
        self.push_screen(self._make_screen(name))

    def _title_of(self, screen: Screen) -> str:
        name = self._shell_name(screen)
        if name in PLACES:
            return PLACES[name].title
        if screen is getattr(self, "chat", None):
            return "Chat"
        return screen.__class__.__name__.removesuffix("Screen") or "This screen"

    def _make_screen(self, name: str) -> Screen | str:
        if name == "extensions":
            return "extensions"
        if name == "tools":
            from workbench.tui.screens.tools_menu import ToolsMenuScreen

            return ToolsMenuScreen(self.host, self.chat.session_id)
        if name == "notifications":
            from workbench.tui.screens.drawer import NotificationDrawer

            return NotificationDrawer(self.host)
        if name == "tasks":
            from workbench.tui.screens.tasks import TasksScreen

            return TasksScreen(self.host)
        if name == "mcp":
            from workbench.tui.screens.mcp import McpScreen

            return McpScreen(self.host)
        if name == "plugins":
            from workbench.tui.screens.plugins import PluginsScreen

            return PluginsScreen(self.host)
        if name == "settings":
            from workbench.tui.screens.settings import SettingsScreen

            return SettingsScreen(self.host)
        if name == "pages":
            from workbench.tui.screens.pages import PagesScreen

            return PagesScreen(self.host)
        raise ValueError(f"no screen named {name!r}")

    def describe_action(self, action: str) -> str:
        """What one of the app's actions does, for the palette and the help."""
        for name, place in PLACES.items():
            if action == f"open('{name}')":
                return place.help
        return ""

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Every key of the app and of ``screen`` (as the help lists them), then themes."""
        for row in key_rows(screen, self.describe_action):
            if row.enabled and row.action != "command_palette":
                yield SystemCommand(row.description, f"{', '.join(row.keys)} · {row.help}",
                                    partial(self.run_action, row.action, row.node))
        if screen is getattr(self, "chat", None):
            yield SystemCommand("Model", "Switch this chat's model (/model NAME; Tab completes)",
                                self.chat.action_choose_model)
        yield SystemCommand("Theme", "Choose a theme (remembered for the next start)",
                            self.action_change_theme)
        for name in sorted(self.available_themes):
            if name.startswith("workbench-") and name != self.theme:
                yield SystemCommand(f"Theme: {name}", "Switch to this theme (remembered)",
                                    partial(setattr, self, "theme", name), discover=False)

    # --- themes ------------------------------------------------------------------

    def _theme_changed(self, theme: Theme) -> None:
        if theme.name != self._remembered_theme:
            self._remembered_theme = theme.name
            if self.host.config.settings.theme != theme.name:  # not already written (Settings)
                self.remember_theme(theme.name)

    @work(thread=True, exclusive=True, group="theme")
    def remember_theme(self, name: str) -> None:
        """Write the theme chosen to the person's config (comments kept)."""
        config = self.host.config
        try:
            config.set("theme", name)
        except WorkbenchError as exc:
            self.call_from_thread(self.notify, f"The theme could not be remembered: {exc}",
                                  severity="error")
            return
        if config.settings.theme != name:
            self.call_from_thread(self.notify, f"The theme is remembered, but {config.origin('theme')} "
                                  "sets another one, which applies at the next start.",
                                  severity="warning")

    # --- notifications -----------------------------------------------------------

    def count_unread(self) -> None:
        """Count the unread notifications again, in a thread."""
        self._counts += 1
        self._count_unread(self._counts)

    @work(thread=True, group="unread")
    def _count_unread(self, count_id: int) -> None:
        try:
            count = len(self.host.schedules.notifications(unread_only=True, limit=None))
        except WorkbenchError:
            return
        self.call_from_thread(self._counted, count_id, count)

    def _counted(self, count_id: int, count: int) -> None:
        if count_id == self._counts:  # a later count is on its way otherwise
            self.unread = count

    def on_notification_drawer_changed(self) -> None:
        self.count_unread()

    def on_shell_event(self, message: ShellEvent) -> None:
        event = message.event
        if isinstance(event, NotificationPosted):
            self.count_unread()
        stack = self.screen_stack  # empty before the first screen and after the last
        if stack and self._shell_name(stack[-1]) is not None:
            stack[-1].post_message(CoreEvent(event))

    # --- the scheduler -----------------------------------------------------------

    def run_scheduler(self) -> None:
        """Run this home's supervisor until the app closes; when another process holds
        the home's scheduler, it stands by (the Tasks screen names the holder).

        A task of its own rather than a worker: it lives as long as the app, and
        ``workers.wait_for_complete`` is for work that ends.
        """
        if self._scheduler_task is None:
            self._scheduler_stop = asyncio.Event()
            self._scheduler_task = asyncio.ensure_future(self._supervise(self._scheduler_stop))

    async def _supervise(self, stop: asyncio.Event) -> None:
        try:
            await self.host.schedules.supervisor().run(stop)
        except Exception as exc:  # noqa: BLE001 - the chat goes on without a scheduler
            self.post_core_event(Notice(level="error", message=f"The scheduler stopped: {exc}"))

    async def _stop_scheduler(self) -> None:
        task, stop = self._scheduler_task, self._scheduler_stop
        if task is None or stop is None:
            return
        stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), SUPERVISOR_STOP_S)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            task.cancel()

    async def action_quit(self) -> None:
        """Close the workbench (the scheduler stops; running runs get a few seconds)."""
        await self._stop_scheduler()
        self.exit()

    # --- core events -------------------------------------------------------------

    def post_core_event(self, event: Event) -> None:
        """Deliver an event of the TUI's own (a theme problem) the way core events go."""
        self.chat.post_message(CoreEvent(event))

    async def on_unmount(self) -> None:
        if self._host is None:
            return  # closed before the host was open: nothing of it runs here
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self.host.chats.cancel()
        await self._stop_scheduler()
        # MCP servers, hooks and starting workers live on this loop: stop them here,
        # before it ends (the caller closes the host's files afterwards).
        await self.host.ashutdown()


def open_app(*, model: str | None = None, cwd: Path | None = None,
             env: Mapping[str, str] | None = None, scheduler: bool = True) -> WorkbenchApp:
    """Open a host answered by the TUI and build the app on it.

    The one factory the CLI and the tests share. The caller runs the app and then
    closes ``app.host``.

    Args:
        model: The model spec; the configured model when None.
        cwd: The working folder (project config, relative model files).
        env: The environment to find the home in; ``os.environ`` when None.
        scheduler: Run this home's scheduler while the app is open.

    Raises:
        WorkbenchError: The host cannot be opened (a config file or the store).
    """
    from workbench.core.host import Host

    responder = TuiResponder()
    host = Host.open(cwd=cwd, model=model, responder=responder, env=env, defer_extensions=True)
    return WorkbenchApp(host, responder, scheduler=scheduler)


def open_later(*, model: str | None = None, cwd: Path | None = None,
               env: Mapping[str, str] | None = None, scheduler: bool = True) -> WorkbenchApp:
    """Build the app, which opens its host in a thread once its first frame is drawn.

    The CLI's way in: the prompt box is on the screen before the core is imported.
    After the app has run, the caller closes ``app.wait_opened()`` (when not None)
    and calls ``app.raise_opening_error()``. Arguments as for ``open_app``.
    """

    def open_host(responder: TuiResponder) -> Host:
        from workbench.core.host import Host

        return Host.open(cwd=cwd, model=model, responder=responder, env=env,
                         defer_extensions=True)

    return WorkbenchApp(None, scheduler=scheduler, open_host=open_host)
