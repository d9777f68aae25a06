"""A chat's Tools menu: which extensions and MCP servers this chat uses, and what each
tool may do.

On the left, one switch per extension (MCP servers are the extensions ``mcp:NAME``):
switching one off here is ``host.switches.set_extension`` for this chat only, and a
chat that has no session yet gets one from the core first, so the switch is kept. On
the right, the tools of the extension under the cursor, each with its own switch in
this chat (``host.switches.set_tool``; it wins over its extension's, as
``host.switches.tool_rows`` reports), each permission it declares, whether it is granted
(``host.grants.explain``), and a button that revokes the grant (``host.grants.revoke``):
the tool asks again next time. Everything is read and changed in worker threads.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Label, ListItem, ListView, Select, Static, Switch

from workbench.core.host import Host
from workbench.core.switches import SwitchRow
from workbench.errors import WorkbenchError
from workbench.events import ExtensionStatusChanged
from workbench.tui.core_event import CoreEvent
from workbench.tui.paths import shown_path
from workbench.tui.times import when

SHORT_ID = 8
@dataclass(frozen=True)
class ToolGrants:
    """One tool: its switch in the chat, and each permission it declares with its grant
    (``host.grants.explain``).

    Attributes:
        on: Whether the chat has it on (its own switch, else its extension's).
        offered: Whether the chat offers it by its name (an ``on`` tool is not when
            another tool wins the name).
    """

    name: str
    qualified: str
    description: str
    permissions: tuple[dict[str, Any], ...]
    on: bool = True
    offered: bool = True
    replaces: tuple[str, ...] = ()
    """The built-in tools it is offered in place of while its add-on is on."""
    replaced_by: str = ""
    """The add-on tool offered in its place in this chat."""


def tool_grants(host: Host, extension: str, session_id: str | None) -> list[ToolGrants]:
    """The tools of ``extension`` a chat can switch (``host.switches.tool_rows``, what
    ``sessions tools --all`` lists) with their switches in ``session_id``, their
    permissions and grants."""
    return [ToolGrants(row.name, row.qualified_name, row.description,
                       tuple(host.grants.explain(row.qualified_name)),
                       on=row.on, offered=row.offered, replaces=row.replaces,
                       replaced_by=row.replaced_by)
            for row in sorted(host.switches.tool_rows(session_id, extension),
                              key=lambda row: row.name)]


def grant_text(row: dict[str, Any]) -> Content:
    """A permission and where it stands: ``read ~/notes · granted always since …``; the
    chat's folder as ``read this project (~/work)``, as the prompt names it."""
    place = shown_path(row["value"])
    what = Content.assemble((f"{row['kind']} ", "bold"),
                            f"this project ({place})" if row.get("project") else place)
    if row.get("optional"):
        what = Content.assemble(what, (" (optional)", "$text-muted"))
    grant = row.get("grant")
    if row["state"] == "refused":  # a request the network proxy refused (``host.grants.explain``)
        return Content.assemble(("• ", "$text-error"), what, "  ", Content.styled(
            f"refused by the proxy {when(row['at'])}: {row['reason']}", "$text-error"))
    if row["state"] == "denied":
        state = Content.styled("denied for good", "$text-error")
    elif row["state"] == "declined":
        state = Content.styled("left out in this session", "$text-muted")
    elif grant is None:
        state = Content.styled("asks when needed", "$text-muted")
    elif grant["scope"] == "session":
        session = str(grant.get("session_id") or "")[:SHORT_ID]
        state = Content.styled(f"granted in session {session}", "$text-success")
    else:
        label = "always" if grant["scope"] == "always" else "for one call"
        state = Content.styled(f"granted {label} since {when(grant['created_at'])}",
                               "$text-success")
    return Content.assemble(("• ", "$text-warning"), what, "  ", state)


class ToolSwitch(Switch):
    """The switch of one tool in the chat (its ``Changed`` is the ``Switch``'s)."""

    def __init__(self, tool: ToolGrants) -> None:
        super().__init__(tool.on, animate=False, classes="tools--switch")
        self.tool = tool


class ExtensionSwitch(ListItem):
    """A list row: the switch and the extension's name, kind and tool count.

    The switch takes clicks but not the focus: the list keeps it, and Enter or
    Space switches the row under the cursor.
    """

    def __init__(self, row: SwitchRow) -> None:
        super().__init__(classes="-disabled" if row.note else "")
        self.row = row

    def compose(self) -> ComposeResult:
        with Horizontal(classes="extension-switch--row"):
            switch = Switch(self.row.on, disabled=bool(self.row.note), animate=False)
            switch.can_focus = False
            yield switch
            count = f"{self.row.tools} tool" + ("" if self.row.tools == 1 else "s")
            yield Label(Content.assemble((self.row.title, "bold"), "\n",
                                         (f"{self.row.kind} · {count}", "$text-muted")),
                        classes="extension-switch--label")

    @property
    def switch(self) -> Switch:
        return self.query_one(Switch)


class ToolsMenuScreen(ModalScreen[None]):
    """The Tools menu of the chat ``session_id`` (None: a chat not started yet).

    | Key | Action |
    | --- | --- |
    | up, down | Move between extensions |
    | enter, space | Switch the extension under the cursor (or the focused tool) on or off |
    | tab | To the tools: their switches and Revoke buttons |
    | escape, ctrl+t | Back to the chat |
    """

    CSS_PATH = "tools_menu.tcss"
    shell_name = "tools"
    """The name the app opens it by."""
    BINDINGS = [
        Binding("escape", "close", "Back"),
        Binding("ctrl+t", "close", "Back", show=False),
        Binding("space", "toggle", "On/off"),
    ]

    def __init__(self, host: Host, session_id: str | None) -> None:
        super().__init__()
        self.host = host
        self.session_id = session_id
        """The chat's session; set when a first switch starts one."""
        self.tools: list[ToolGrants] = []
        """The tools shown on the right."""
        self._revokes: dict[str, tuple[str, str, str]] = {}
        self._network_shown: str | None = None
        """The shell's network level the Network row shows."""

    def compose(self) -> ComposeResult:
        with Vertical(id="tools-dialog") as dialog:
            dialog.border_title = "Tools in this chat"
            dialog.border_subtitle = self._subtitle()
            with Horizontal(id="tools-body"):
                yield ListView(id="tools-switches")
                detail = VerticalScroll(id="tools-detail")
                detail.can_focus = False  # Tab goes to its switches and buttons
                yield detail
            yield Static("", id="tools-message")
        yield Footer()

    def _subtitle(self) -> str:
        if self.session_id:
            return f"session {self.session_id[:SHORT_ID]}"
        return "a new chat: switching starts its session"

    def on_mount(self) -> None:
        self.query_one(ListView).focus()
        self.refresh_rows()

    # --- reading -------------------------------------------------------------------

    @property
    def rows(self) -> list[SwitchRow]:
        """The extensions listed, in order."""
        return [item.row for item in self.query(ExtensionSwitch)]

    @property
    def selected(self) -> ExtensionSwitch | None:
        item = self.query_one(ListView).highlighted_child
        return item if isinstance(item, ExtensionSwitch) else None

    def say(self, text: str, level: str = "info") -> None:
        message = self.query_one("#tools-message", Static)
        message.update(Content(text))
        message.set_classes(f"-{level}" if text else "")

    @work(thread=True, exclusive=True, group="tools-rows")
    def refresh_rows(self, select: str | None = None) -> None:
        """Read the extensions and this chat's switches again."""
        try:
            rows = self.host.switches.rows(self.session_id)
        except WorkbenchError as exc:
            self.app.call_from_thread(self.say, str(exc), "error")
            return
        self.app.call_from_thread(self._show_rows, rows, select)

    async def _show_rows(self, rows: list[SwitchRow], select: str | None) -> None:
        if not self.is_attached:
            return
        listed = self.query_one(ListView)
        keep = select or (self.selected.row.name if self.selected else None)
        await listed.clear()
        await listed.extend(ExtensionSwitch(row) for row in rows)
        names = [row.name for row in rows]
        listed.index = names.index(keep) if keep in names else (0 if names else None)
        if not rows:
            self.say("No extensions are loaded.")

    @on(ListView.Highlighted, "#tools-switches")
    def _highlighted(self, event: ListView.Highlighted) -> None:
        if isinstance(event.item, ExtensionSwitch):
            self.read_tools(event.item.row.name)

    @work(thread=True, exclusive=True, group="tools-detail")
    def read_tools(self, extension: str) -> None:
        """Read the tools of ``extension`` with their grants."""
        try:
            tools = tool_grants(self.host, extension, self.session_id)
        except WorkbenchError as exc:
            self.app.call_from_thread(self.say, str(exc), "error")
            return
        self.app.call_from_thread(self._show_tools, extension, tools)

    async def _show_tools(self, extension: str, tools: list[ToolGrants]) -> None:
        selected = self.selected
        if not self.is_attached or selected is None or selected.row.name != extension:
            return
        self.tools = tools
        detail = self.query_one("#tools-detail", VerticalScroll)
        await detail.remove_children()
        await detail.mount_all(self._tool_widgets(selected.row, tools))

    def _tool_widgets(self, row: SwitchRow, tools: list[ToolGrants]) -> Iterable[Any]:
        self._revokes = {}
        if row.name == "shell":
            yield from self._network_widgets()
        if row.note:
            yield Static(Content.styled(f"{row.title}: {row.note}", "$text-warning"),
                         classes="tools--note")
        if not tools:
            yield Static("No tools (yet): an MCP server lists its tools when it first starts."
                         if row.kind == "MCP server" else "No tools.", classes="tools--muted")
        for tool in tools:
            name = Content.assemble((tool.name, "bold"))
            if not tool.on:
                name = Content.assemble(name, ("  off in this chat", "$text-muted"))
            elif tool.replaced_by:
                name = Content.assemble(name, (f"  replaced by {tool.replaced_by} in this chat",
                                               "$text-muted"))
            elif not tool.offered:
                name = Content.assemble(name, ("  another tool has its name", "$text-warning"))
            yield Horizontal(ToolSwitch(tool), Static(name, classes="tools--title"),
                             classes="tools--name")
            if tool.description:
                yield Static(Content(tool.description.splitlines()[0]), classes="tools--muted")
            if tool.replaces:
                yield Static(Content(f"in place of the built-in {', '.join(tool.replaces)} "
                                     "while on in this chat"), classes="tools--muted")
            if not tool.permissions:
                yield Static("needs no permissions", classes="tools--permission tools--muted")
            for permission in tool.permissions:
                if permission.get("grant") is None:
                    yield Static(grant_text(permission), classes="tools--permission")
                    continue
                button_id = f"revoke-{len(self._revokes)}"
                self._revokes[button_id] = (tool.qualified, permission["kind"], permission["value"])
                yield Horizontal(Static(grant_text(permission), classes="tools--grant"),
                                 Button("Revoke", id=button_id, compact=True, variant="warning"),
                                 classes="tools--permission")

    def _network_widgets(self) -> Iterable[Any]:
        """The shell's Network row: Off, Package registries or All public sites."""
        try:
            found = self.host.shell.network(self.session_id)
        except WorkbenchError:
            return
        described = found["labels"].__getitem__
        self._network_shown = found["chosen"] or found["setting"]
        options = [(f"{described(level)}{'' if level != found['setting'] else ' (the setting)'}", level)
                   for level in found["levels"]]
        yield Horizontal(Static(Content.assemble(("Network", "bold")), classes="tools--title"),
                         Select(options, value=found["chosen"] or found["setting"], allow_blank=False,
                                id="shell-network", compact=True),
                         classes="tools--name")
        note = f"ceiling: {described(found['ceiling'])} (shell.network_ceiling, your own config)"
        if found["level"] != (found["chosen"] or found["setting"]):
            note += f"; in force: {described(found['level'])}"
        yield Static(Content.styled(note, "$text-muted"), id="shell-network-note", classes="tools--muted")

    @on(Select.Changed, "#shell-network")
    def _network_chosen(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and event.value != self._network_shown:
            self._network_shown = event.value
            self.set_network(event.value)

    @work(thread=True, exclusive=True, group="tools-network")
    def set_network(self, level: str) -> None:
        """Choose the shell's network in this chat (``host.shell.set_network``)."""
        try:
            found = self.host.shell.set_network(self._session(), level)
        except WorkbenchError as exc:
            self.app.call_from_thread(self.say, str(exc), "error")
            return
        self.app.call_from_thread(self.say, f"The shell's network in this chat: "
                                  f"{found['labels'][found['level']]}.")

    # --- switching -----------------------------------------------------------------

    def action_toggle(self) -> None:
        """Switch the extension under the cursor on or off in this chat."""
        selected = self.selected
        if selected is not None and not selected.row.note:
            selected.switch.toggle()

    @on(ListView.Selected, "#tools-switches")
    def _chosen(self, event: ListView.Selected) -> None:
        if isinstance(event.item, ExtensionSwitch) and not event.item.row.note:
            event.item.switch.toggle()

    @on(Switch.Changed)
    def _switched(self, event: Switch.Changed) -> None:
        if isinstance(event.switch, ToolSwitch):
            tool = event.switch.tool
            self.say(f"Switching {tool.name} {'on' if event.value else 'off'}…", "working")
            self.switch_tool(tool, event.value)
            return
        item = next((found for found in event.switch.ancestors if isinstance(found, ExtensionSwitch)),
                    None)
        if item is not None:
            self.say(f"Switching {item.row.title} {'on' if event.value else 'off'}…", "working")
            self.switch(item.row, event.value)

    def _session(self) -> str:
        """This chat's session, started through the core when it has none (in a thread)."""
        if self.session_id is None:
            self.session_id = self.host.chats.new()["id"]
            self.app.call_from_thread(self._started)
        return self.session_id

    @work(thread=True, group="tools-switch")
    def switch(self, row: SwitchRow, on_: bool) -> None:
        """Switch ``row`` on or off in this chat, starting the chat's session first
        when it has none."""
        host = self.host
        try:
            host.switches.set_extension(self._session(), row.name, on_)
        except WorkbenchError as exc:
            self.app.call_from_thread(self._refused, row.name, exc)
            return
        verb = "uses" if on_ else "no longer uses"
        self.app.call_from_thread(self._switched_done, f"This chat {verb} {row.title}.")

    @work(thread=True, group="tools-switch")
    def switch_tool(self, tool: ToolGrants, on_: bool) -> None:
        """Switch one tool on or off in this chat, whatever its extension's switch."""
        try:
            self.host.switches.set_tool(self._session(), tool.qualified, on_)
        except WorkbenchError as exc:
            self.app.call_from_thread(self._refused, None, exc)
            return
        verb = "offers" if on_ else "no longer offers"
        self.app.call_from_thread(self._switched_done, f"This chat {verb} {tool.name}.")

    def _switched_done(self, text: str) -> None:
        if not self.is_attached:
            return
        self.say(text, "success")
        if self.selected is not None:
            self.read_tools(self.selected.row.name)

    def _started(self) -> None:
        if self.is_attached:
            self.query_one("#tools-dialog").border_subtitle = self._subtitle()

    def _refused(self, name: str | None, error: WorkbenchError) -> None:
        if not self.is_attached:
            return
        self.say(str(error), "error")
        self.refresh_rows(select=name)
        if self.selected is not None:
            self.read_tools(self.selected.row.name)

    # --- grants --------------------------------------------------------------------

    @on(Button.Pressed)
    def _revoke_pressed(self, event: Button.Pressed) -> None:
        found = self._revokes.get(event.button.id or "")
        if found is not None:
            event.stop()
            self.revoke(*found)

    @work(thread=True, group="tools-revoke")
    def revoke(self, tool: str, kind: str, value: str) -> None:
        """Revoke ``tool``'s grants of ``kind`` ``value``: it asks again next time."""
        try:
            self.host.grants.revoke(tool, kind, value)
        except WorkbenchError as exc:
            self.app.call_from_thread(self.say, str(exc), "error")
            return
        self.app.call_from_thread(self._revoked, tool, f"{kind} {shown_path(value)}")

    def _revoked(self, tool: str, what: str) -> None:
        if not self.is_attached:
            return
        self.say(f"Revoked {what} of {tool}: it asks again next time.", "success")
        if self.selected is not None:
            self.read_tools(self.selected.row.name)
            self.query_one(ListView).focus()

    def on_core_event(self, message: CoreEvent) -> None:
        if isinstance(message.event, ExtensionStatusChanged):  # reloaded, or a server's tools
            self.refresh_rows()
            if self.selected is not None:
                self.read_tools(self.selected.row.name)

    def action_close(self) -> None:
        """Back to the chat."""
        self.dismiss(None)
