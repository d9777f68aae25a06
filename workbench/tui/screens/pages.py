"""The Pages screen: the pages extensions declare (``host.pages.list``), the chosen one
opened by calling its tool as the person (``host.pages.open``) and its card drawn with
the TUI's own widgets (``CardView``).

Enter opens the page under the cursor (the first one, or the asked-for extension's, opens
as the screen does); ``r`` opens it again. An ``Action.Execute`` pressed on the card runs
through ``host.pages.act``, which calls only a tool the page's own extension declares;
its outcome is said under the card, and the page is drawn again as its tool serves it
after the action. A page that cannot be opened, and an action that is refused or fails,
are said inline; nothing here raises.
"""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Button, Footer, Label, OptionList, Static
from textual.widgets.option_list import Option

from workbench import jsontext
from workbench.core.host import Host
from workbench.core.pages import OpenedPage, PageRow
from workbench.errors import WorkbenchError
from workbench.tui.widgets.card_view import CardView

MAX_RESULT_SHOWN = 200
"""The most characters of an action's result said under the card."""


def _prompt(row: PageRow) -> Content:
    return Content.assemble((" ".join(row.title.split()), "bold"),
                            (f" · {' '.join(row.extension_title.split())}", "$text-muted"))


def summary(result: object) -> str:
    """An action's result on one line, cut to ``MAX_RESULT_SHOWN`` characters."""
    text = result if isinstance(result, str) else jsontext.dumps(result, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= MAX_RESULT_SHOWN else text[:MAX_RESULT_SHOWN - 1] + "…"


class PagesScreen(Screen):
    """Extensions' pages, each a card its extension's own tool serves.

    | Key | Action |
    | --- | --- |
    | up, down | Move between pages |
    | enter | Open the page |
    | r | Open it again |
    | tab, shift+tab | Into the card: its inputs and buttons, in order |
    | enter, space | Press the focused button (after an action, the first button of the page drawn again is focused) |
    | escape, f5 | Back |

    Args:
        host: The open host.
        extension: Open the first page of this extension (else the first page).
    """

    CSS_PATH = "pages.tcss"
    shell_name = "pages"
    """The name the app opens it by."""
    BINDINGS = [
        Binding("escape", "close", "Back"),
        Binding("f5", "close", "Back", show=False),
        Binding("r", "reload", "Reload"),
    ]

    def __init__(self, host: Host, extension: str | None = None) -> None:
        super().__init__(id="pages")
        self.host = host
        self.extension = extension
        self.rows: list[PageRow] = []
        """The pages listed."""
        self.opened: OpenedPage | None = None
        """The page drawn now."""
        self.showing: PageRow | None = None
        """The page being opened or drawn."""

    def compose(self) -> ComposeResult:
        with Horizontal(id="pages-header"):
            yield Label(Content.assemble(("workbench", "bold"), "  ·  Pages"), id="pages-title")
            yield Label("enter opens · r reloads", id="pages-keys")
        with Horizontal(id="pages-body"):
            yield OptionList(id="pages-list")
            yield VerticalScroll(id="pages-card")
        yield Static("", id="pages-message")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.read_pages()

    def say(self, text: str, level: str = "info") -> None:
        """Put ``text`` in the message line; ``level`` is ``info``, ``working``,
        ``success`` or ``error``."""
        found = self.query("#pages-message")
        if not found:
            return  # closed while a page was opening or an action ran
        message = found.first(Static)
        message.update(Content(text))
        message.set_classes(f"-{level}" if text else "")

    @property
    def message(self) -> str:
        """What the message line says now."""
        return str(self.query_one("#pages-message", Static).content)

    @property
    def card_view(self) -> CardView | None:
        """The card drawn now, if any."""
        found = self.query(CardView)
        return found.first() if found else None

    # --- listing and opening -----------------------------------------------------------

    @work(thread=True, exclusive=True, group="pages-read")
    def read_pages(self) -> None:
        """Read the pages again (from the extensions' manifests)."""
        try:
            rows = self.host.pages.list()
        except WorkbenchError as exc:
            self.app.call_from_thread(self.say, str(exc), "error")
            return
        self.app.call_from_thread(self._list, rows)

    def _list(self, rows: list[PageRow]) -> None:
        if not self.is_attached:
            return
        self.rows = rows
        listed = self.query_one(OptionList)
        with self.prevent(OptionList.OptionHighlighted):
            listed.set_options(Option(_prompt(row), id=row.key) for row in rows)
        if not rows:
            self._show_text("No extension has pages. An extension declares them in its loca.json "
                            '("pages"), each served by one of its own tools.', "pages--muted")
            return
        first = next((index for index, row in enumerate(rows) if row.extension == self.extension), 0)
        listed.highlighted = first
        self.open_page(rows[first])

    @on(OptionList.OptionSelected, "#pages-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        if 0 <= event.option_index < len(self.rows):
            self.open_page(self.rows[event.option_index])

    def action_reload(self) -> None:
        """Open the page again, as its tool serves it now."""
        if self.showing is not None:
            self.open_page(self.showing)

    @work(exclusive=True, group="pages-open")
    async def open_page(self, row: PageRow) -> None:
        """Call the page's tool as the person and draw its card."""
        self.showing = row
        self.say(f"Opening {row.title}…", "working")
        try:
            opened = await self.host.pages.open(row.extension, row.id)
        except WorkbenchError as exc:
            self.opened = None
            await self._replace(Static(Content(str(exc)), classes="pages--error"))
            self.say("")
            return
        await self._draw(opened)
        self.say("")

    async def _draw(self, opened: OpenedPage) -> None:
        await self._replace(CardView(opened.card, id="pages-card-view"))
        self.opened = opened  # once its card is the one drawn

    async def _replace(self, widget: Static | CardView) -> None:
        found = self.query("#pages-card")
        if not found:
            return
        box = found.first(VerticalScroll)
        with self.app.batch_update():
            await box.remove_children()
            await box.mount(widget)

    def _show_text(self, text: str, classes: str) -> None:
        self.run_worker(self._replace(Static(Content(text), classes=classes)), group="pages-open",
                        exclusive=True)

    # --- acting ---------------------------------------------------------------------

    @on(CardView.ActionPressed)
    def _action(self, event: CardView.ActionPressed) -> None:
        event.stop()
        if self.opened is not None:
            self.run_action_of(self.opened.page, event.verb, event.data, event.action.title)

    @work(exclusive=True, group="pages-act")
    async def run_action_of(self, row: PageRow, verb: str, data: dict, title: str) -> None:
        """Run the card's action through the page's own extension, then draw the page again."""
        self.say(f"{' '.join(title.split())}…", "working")
        try:
            done = await self.host.pages.act(row.extension, row.id, verb, data)
        except WorkbenchError as exc:
            self.say(f"✗ {exc}", "error")
            return
        outcome = done.outcome
        if done.reopened is not None and self.showing == row:
            await self._draw(done.reopened)
            self._focus_card()
        if outcome.ok:
            said, level = f"✓ {verb}: {summary(outcome.result)}", "success"
        else:
            error = outcome.error or {}
            said, level = f"✗ {verb}: {error.get('message', 'failed')}", "error"
        if done.reopen_error:
            said, level = f"{said}\nThe page could not be opened again: {done.reopen_error}", "error"
        self.say(said, level)

    def _focus_card(self) -> None:
        """Keep the keyboard in the card drawn again after an action: on its first enabled
        button (the next waiting change's Confirm, say), else on the list of pages."""
        view = self.card_view
        buttons = [b for b in view.query(Button) if not b.disabled] if view is not None else []
        if buttons:
            buttons[0].focus()
        else:
            self.query_one(OptionList).focus()

    def action_close(self) -> None:
        """Back."""
        self.app.pop_screen()
