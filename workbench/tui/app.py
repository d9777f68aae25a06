"""The Textual app: key bindings, themes, and the one bridge from core events to screens.

Everything the app shows comes from the ``Host`` it is given; layout lives in the
screens and behaviour in the core.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from textual import work
from textual.app import App, SystemCommand, active_app
from textual.binding import Binding
from textual.screen import Screen

from workbench.core.host import Host
from workbench.events import Event, Notice
from workbench.tui.core_event import CoreEvent
from workbench.tui.responder import TuiResponder
from workbench.tui.screens.chat import ChatScreen
from workbench.tui.themes import DEFAULT_THEME, THEMES_DIR, load_themes


def extensions_screen() -> Screen:
    """The Extensions screen, built (and its module imported) on first use."""
    from workbench.tui.screens.extensions import ExtensionsScreen

    app = active_app.get()
    assert isinstance(app, WorkbenchApp)
    return ExtensionsScreen(app.host)


class WorkbenchApp(App):
    """The workbench TUI.

    Args:
        host: The open host; the caller closes it after the app has exited.
        responder: The responder the host was opened with; a new one is made (and
            given to the host) when omitted.
        themes_dir: Where the theme files are.
    """

    TITLE = "workbench"
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("ctrl+e", "show_extensions", "Extensions", priority=True),
    ]
    SCREENS = {"extensions": extensions_screen}

    def __init__(self, host: Host, responder: TuiResponder | None = None, *,
                 themes_dir: Path = THEMES_DIR) -> None:
        super().__init__()
        self.host = host
        self.responder = responder or TuiResponder()
        self.responder.bind(self)
        host.set_responder(self.responder)
        self._startup_notices = self._load_themes(themes_dir)
        self._unsubscribe: Callable[[], None] | None = None
        self.chat: ChatScreen
        """The chat screen, pushed at mount."""

    def _load_themes(self, folder: Path) -> list[str]:
        """Register the theme files and pick the configured theme; returns problems to show."""
        themes, problems = load_themes(folder)
        for theme in themes:
            self.register_theme(theme)
        wanted = str(self.host.config.get("theme") or DEFAULT_THEME)
        if wanted in self.available_themes:
            self.theme = wanted
        else:
            fallback = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
            problems.append(f"unknown theme {wanted!r}; using {fallback}. "
                            f"Known: {', '.join(sorted(self.available_themes))}")
            self.theme = fallback
        return problems

    async def on_mount(self) -> None:
        # Pushed rather than returned from get_default_screen, which would skip
        # loading the screen's CSS_PATH; awaited so that the chat is ready (and
        # focused) before the first key arrives.
        chat = self.chat = ChatScreen(self.host)
        await self.push_screen(chat)
        # The event bridge. Listeners run where the core publishes: mostly on this
        # loop, but a tool running in a worker thread reports progress from that
        # thread, and post_message is safe to call from any thread.
        self._unsubscribe = self.host.bus.subscribe(
            lambda event: chat.post_message(CoreEvent(event)))
        for problem in self._startup_notices:
            self.post_core_event(Notice(level="warning", message=problem))
        self.load_extensions()

    @work(thread=True, group="startup")
    def load_extensions(self) -> None:
        """Load the extensions after the first frame, then show the setup notices."""
        self.host.ensure_extensions()
        self.call_from_thread(self.host.announce)

    def action_show_extensions(self) -> None:
        """Open the Extensions screen over the chat."""
        if self.screen is self.chat:
            self.push_screen("extensions")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "show_extensions":
            # Only from the chat: over a prompt, a permission or a form waits for its
            # answer; on the Extensions screen the key goes back (its own binding).
            return self.screen is getattr(self, "chat", None)
        return True

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if screen is self.chat:
            yield SystemCommand("Extensions", "Install, update, remove and trust extensions; "
                                "the marketplace; their status", self.action_show_extensions)

    def post_core_event(self, event: Event) -> None:
        """Deliver an event of the TUI's own (a theme problem) the way core events go."""
        self.chat.post_message(CoreEvent(event))

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        self.host.cancel()


def open_app(*, model: str | None = None, cwd: Path | None = None,
             env: Mapping[str, str] | None = None) -> WorkbenchApp:
    """Open a host answered by the TUI and build the app on it.

    The one factory the CLI and the tests share. The caller runs the app and then
    closes ``app.host``.

    Args:
        model: The model spec; the configured model when None.
        cwd: The working folder (project config, relative model files).
        env: The environment to find the home in; ``os.environ`` when None.

    Raises:
        WorkbenchError: The host cannot be opened (a config file or the store).
    """
    responder = TuiResponder()
    host = Host.open(cwd=cwd, model=model, responder=responder, env=env, defer_extensions=True)
    return WorkbenchApp(host, responder)
