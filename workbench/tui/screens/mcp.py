"""The MCP servers screen: every server entry with its state, its tools, prompts and
resources (``host.mcp.servers``, secrets masked).

``c`` starts the selected server now to check it (``host.mcp.check``, on the app's
loop, where the host runs its servers); ``s`` switches it off or on everywhere
(``host.mcp.set_enabled``: ``mcp.disabled`` in the person's config). A chat switches a
server off for itself in its Tools menu. The list is read again when a server changes
state or lists new tools (``ExtensionStatusChanged``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Label, OptionList, Static
from textual.widgets.option_list import Option

from workbench.core.host import Host
from workbench.errors import WorkbenchError
from workbench.events import ExtensionStatusChanged
from workbench.tui.core_event import CoreEvent
from workbench.tui.paths import shown_path

STATE_STYLES = {"running": "bold $text-success", "stopped": "$text-muted",
                "starting": "$text-primary", "backoff": "bold $text-warning",
                "fatal": "bold $text-error", "disabled": "$text-muted",
                "untrusted": "bold $text-warning"}

STATE_WORDS = {"stopped": "starts at its first call", "disabled": "switched off everywhere",
               "untrusted": "in a project config that is not trusted (Settings: t)",
               "backoff": "unavailable; restarting", "fatal": "gave up until the next call"}


def state_badge(state: str) -> Content:
    return Content.styled(state, STATE_STYLES.get(state, ""))


def _prompt(server: dict[str, Any]) -> Content:
    count = len(server["tools"])
    tools = f"{count} tool" + ("" if count == 1 else "s") if server["tools_known"] else "tools unknown"
    return Content.assemble((server["name"], "bold"), "\n", state_badge(server["state"]),
                            (f" · {tools}", "$text-muted"))


class McpScreen(Screen):
    """The MCP servers and their tools.

    | Key | Action |
    | --- | --- |
    | up, down | Move between servers |
    | c | Start the server now, to check it |
    | s | Switch it off (or on) everywhere |
    | escape, f3 | Back |
    """

    CSS_PATH = "mcp.tcss"
    shell_name = "mcp"
    """The name the app opens it by."""
    BINDINGS = [
        Binding("escape", "close", "Back"),
        Binding("f3", "close", "Back", show=False),
        Binding("c", "check", "Check"),
        Binding("s", "switch", "On/off everywhere"),
    ]

    def __init__(self, host: Host) -> None:
        super().__init__(id="mcp")
        self.host = host
        self.servers: list[dict[str, Any]] = []
        """The servers listed."""
        self.checking = False

    def compose(self) -> ComposeResult:
        with Horizontal(id="mcp-header"):
            yield Label(Content.assemble(("workbench", "bold"), "  ·  MCP servers"), id="mcp-title")
            yield Label("workbench mcp add … adds one", id="mcp-keys")
        with Horizontal(id="mcp-body"):
            yield OptionList(id="mcp-list")
            yield VerticalScroll(id="mcp-detail")
        yield Static("", id="mcp-message")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.refresh_servers()

    @property
    def selected(self) -> dict[str, Any] | None:
        """The server under the cursor (none while the list is not mounted, or no longer:
        the footer asks for the keys as the screen is built and taken down)."""
        lists = self.query(OptionList)
        if not lists:
            return None
        index = lists.first().highlighted
        if index is None or not 0 <= index < len(self.servers):
            return None
        return self.servers[index]

    def say(self, text: str, level: str = "info") -> None:
        message = self.query_one("#mcp-message", Static)
        message.update(Content(text))
        message.set_classes(f"-{level}" if text else "")

    @work(thread=True, exclusive=True, group="mcp-read")
    def refresh_servers(self) -> None:
        """Read the servers again."""
        try:
            self.host.loading.ensure()
            servers = self.host.mcp.servers()
        except WorkbenchError as exc:
            self.app.call_from_thread(self.say, str(exc), "error")
            return
        self.app.call_from_thread(self._show, servers)

    async def _show(self, servers: list[dict[str, Any]]) -> None:
        if not self.is_attached:
            return
        keep = (self.selected or {}).get("name")
        self.servers = servers
        listed = self.query_one(OptionList)
        with self.prevent(OptionList.OptionHighlighted):
            listed.set_options(Option(_prompt(server), id=server["name"]) for server in servers)
            names = [server["name"] for server in servers]
            listed.highlighted = names.index(keep) if keep in names else (0 if names else None)
        await self._show_detail()

    @on(OptionList.OptionHighlighted, "#mcp-list")
    async def _show_detail(self) -> None:
        box = self.query_one("#mcp-detail", VerticalScroll)
        with self.app.batch_update():
            await box.remove_children()
            await box.mount_all(self._detail(self.selected))
        self.refresh_bindings()

    def _detail(self, server: dict[str, Any] | None) -> Iterable[Widget]:
        if server is None:
            yield Static("No MCP servers. `workbench mcp add NAME -- COMMAND …` adds one; a "
                         "trusted project can name its own in .workbench/config.toml.",
                         classes="mcp--muted")
            return
        yield Static(Content.styled(server["name"], "bold"), classes="mcp--title")
        state = Content.assemble(state_badge(server["state"]))
        words = STATE_WORDS.get(server["state"])
        if words:
            state = Content.assemble(state, (f": {words}", "$text-muted"))
        if server.get("reason"):
            state = Content.assemble(state, "\n", (server["reason"], "$text-error"))
        if server.get("sandbox_note"):
            state = Content.assemble(state, "\n", (f"sandbox: {server['sandbox_note']}", "$text-warning"))
        yield Static(state, classes="mcp--line")
        yield Static(Content.assemble((f"{server['transport']}  ", "$text-muted"),
                                      shown_path(server["target"])), classes="mcp--line")
        where = f"{server['scope']} · {shown_path(server['origin'])}"
        if server.get("sandbox"):
            where += " · sandboxed"
        yield Static(Content.styled(where, "$text-muted"), classes="mcp--line")
        if server.get("pending_change"):
            yield Static("Its entry changed in the project config; the change waits for trust.",
                         classes="mcp--note")
        yield Static(Content.styled("Tools", "bold $text-primary"), classes="mcp--heading")
        if not server["tools_known"]:
            yield Static("not listed yet: press c to start it", classes="mcp--muted")
        elif not server["tools"]:
            yield Static("none", classes="mcp--muted")
        for tool in server["tools"]:
            name = Content.assemble(("⚙ ", "$text-primary"), (tool["name"], "bold"))
            if tool.get("unusable"):
                name = Content.assemble(name, (f"  not offered: {tool['unusable']}", "$text-warning"))
            elif not tool["enabled"]:
                name = Content.assemble(name, ("  switched off", "$text-muted"))
            yield Static(name, classes="mcp--tool")
            if tool.get("description"):
                yield Static(Content(tool["description"].splitlines()[0]), classes="mcp--muted-item")
        for heading, items in (("Prompts", server["prompts"]), ("Resources", server["resources"])):
            if items:
                yield Static(Content.styled(heading, "bold $text-primary"), classes="mcp--heading")
                yield Static(Content(", ".join(items)), classes="mcp--item")

    # --- actions ---------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        server = self.selected
        if action == "check":
            return None if server is None or self.checking or server["state"] in (
                "disabled", "untrusted") else True
        if action == "switch":
            return None if server is None or server["state"] == "untrusted" else True
        return True

    def action_check(self) -> None:
        """Start the selected server now and say whether it answers."""
        server = self.selected
        if server is None:
            return
        self.checking = True
        self.say(f"Starting {server['name']}…", "working")
        self.app.run_worker(self._check(server["name"]), group="mcp-check", exit_on_error=False)

    async def _check(self, name: str) -> None:
        try:
            failures = await self.host.mcp.check([name])
        except WorkbenchError as exc:
            failures = {name: str(exc)}
        self.checking = False
        if not self.is_attached:
            return
        if name in failures:
            self.say(f"{name} could not start: {failures[name]}", "error")
        else:
            self.say(f"{name} is running.", "success")
        self.refresh_servers()

    def action_switch(self) -> None:
        """Switch the selected server off everywhere, or on again."""
        server = self.selected
        if server is None:
            return
        on_ = server["state"] == "disabled"
        self.say(f"Switching {server['name']} {'on' if on_ else 'off'}…", "working")
        self._switch(server["name"], on_)

    @work(thread=True, group="mcp-switch")
    def _switch(self, name: str, on_: bool) -> None:
        try:
            notice = self.host.mcp.set_enabled(name, on_)
        except WorkbenchError as exc:
            self.app.call_from_thread(self.say, str(exc), "error")
            return
        text = f"{name} is switched {'on' if on_ else 'off'} everywhere."
        self.app.call_from_thread(self.say, f"{text} {notice}" if notice else text, "success")
        self.app.call_from_thread(self.refresh_servers)

    def on_core_event(self, message: CoreEvent) -> None:
        if isinstance(message.event, ExtensionStatusChanged):
            self.refresh_servers()

    def action_close(self) -> None:
        """Back to the chat."""
        self.app.pop_screen()
