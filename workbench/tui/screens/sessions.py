"""The list of chats: pick one to resume it, or start a new one.

The sessions are read from the store in a worker; Enter (or a click) dismisses the
screen with the chosen session, which the chat screen then shows and continues.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Label, OptionList, Static
from textual.widgets.option_list import Option

from workbench.core.host import Host
from workbench.core.sessions import SessionRow
from workbench.tui.times import when

TITLE_WIDTH = 64


@dataclass(frozen=True)
class SessionChoice:
    """What the person picked: a session to resume, or None for a new chat."""

    session_id: str | None


def session_prompt(session: SessionRow, *, current: bool = False) -> Content:
    """Two lines for a session: its title, then its date, message count and model."""
    title = session.title or "(untitled)"
    if len(title) > TITLE_WIDTH:
        title = title[: TITLE_WIDTH - 1] + "…"
    count = session.message_count
    first = Content.styled(title, "bold")
    if current:
        first = Content.assemble(first, ("  ● current", "$text-success"))
    details = f"{when(session.updated_at)} · {count} message{'s' if count != 1 else ''}"
    if session.model:
        details += f" · {session.model}"
    return Content.assemble(first, "\n", (details, "$text-muted"))


class SessionList(OptionList):
    """The chats, most recent first; Enter resumes the highlighted one."""

    BINDINGS = [Binding("enter", "select", "Resume")]


class SessionsScreen(Screen[SessionChoice | None]):
    """Every chat with its title, date and message count.

    Args:
        host: Where the sessions are.
        current: The chat on screen, marked in the list.

    | Key | Does |
    | --- | --- |
    | enter, click | Resume the chat: it is shown and the next prompt continues it. |
    | n | Start a new chat. |
    | escape | Back to the chat as it was. |
    """

    CSS_PATH = "sessions.tcss"
    BINDINGS = [
        Binding("n", "new_chat", "New chat"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, host: Host, current: str | None = None) -> None:
        super().__init__()
        self.host = host
        self.current = current
        self.sessions: list[SessionRow] = []
        """The sessions listed, in order; empty until they are read."""

    def compose(self) -> ComposeResult:
        with Horizontal(id="sessions-header"):
            yield Label(Content.styled("Chats", "bold"), id="sessions-title")
            yield Label("", id="sessions-count")
        yield SessionList(id="sessions-list")
        yield Static("Reading the chats…", id="sessions-empty")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(SessionList).display = False
        self.read_sessions()

    @work(thread=True, exclusive=True, group="sessions")
    def read_sessions(self) -> None:
        """Read the sessions from the store, off the event loop."""
        sessions = self.host.chats.rows()
        self.app.call_from_thread(self._show, sessions)

    def _show(self, sessions: list[SessionRow]) -> None:
        self.sessions = sessions
        listing = self.query_one(SessionList)
        empty = self.query_one("#sessions-empty", Static)
        self.query_one("#sessions-count", Label).update(
            f"{len(sessions)} chat{'s' if len(sessions) != 1 else ''}" if sessions else "")
        if not sessions:
            empty.update("No chats yet. Press n (or Escape) to start one.")
            return
        empty.display = False
        listing.display = True
        listing.set_options(
            Option(session_prompt(s, current=s.id == self.current), id=s.id)
            for s in sessions)
        current = next((i for i, s in enumerate(sessions) if s.id == self.current), 0)
        listing.highlighted = current
        listing.focus()

    @on(OptionList.OptionSelected, "#sessions-list")
    def resume(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        self.dismiss(SessionChoice(message.option.id))

    def action_new_chat(self) -> None:
        """Leave the list for a new, empty chat."""
        self.dismiss(SessionChoice(None))

    def action_back(self) -> None:
        """Back to the chat as it was."""
        self.dismiss(None)
