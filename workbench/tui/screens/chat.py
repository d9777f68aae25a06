"""The chat screen: the conversation, the prompt box, slash commands and the keys.

Prompts go to the host from a worker; what happens in the turn comes back as
``CoreEvent`` messages from the app's event bridge and is drawn by ``MessageList``.
Earlier chats are listed by ``SessionsScreen`` and resumed here; ``/`` in the prompt
offers the built-in commands and the MCP servers' prompts.
"""

from __future__ import annotations

import asyncio
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Label, OptionList, TextArea

from workbench.core.host import Host
from workbench.errors import SessionBusyError, WorkbenchError
from workbench.events import (DisplayBubble, ExtensionStatusChanged, MessageEnded, Notice,
                              SessionStarted, TextDelta, ToolCallEnded, ToolCallLog,
                              ToolCallProgress, ToolCallStarted, TurnEnded)
from workbench.tui.core_event import CoreEvent
from workbench.tui.screens.prompt_arguments import PromptArgumentsScreen
from workbench.tui.screens.sessions import SessionChoice, SessionsScreen
from workbench.tui.slash_commands import (BUILTIN_COMMANDS, SlashCommand, find, matching,
                                          prompt_commands)
from workbench.tui.widgets.message_list import Entry, MessageList, history_entries
from workbench.tui.widgets.prompt_input import PromptInput
from workbench.tui.widgets.slash_menu import SlashMenu
from workbench.tui.widgets.tool_call_card import ToolCallCard

SHORT_ID = 8

KEYS_HELP = (
    "Keys: Enter sends · Shift+Enter or Ctrl+J breaks the line · Up/Down in an empty "
    "prompt bring back earlier prompts · Esc cancels the turn · Ctrl+L new chat · "
    "Ctrl+O earlier chats · Ctrl+Up/Ctrl+Down move between messages (then Up/Down, "
    "Home/End) · on a message: C copies it · on a tool card: L shows its log, "
    "X cancels the call · Ctrl+Home/Ctrl+End jump to the first/latest message."
)


class ChatScreen(Screen):
    """One conversation with the model.

    Args:
        host: The host that runs the turns.
    """

    CSS_PATH = "chat.tcss"
    BINDINGS = [
        Binding("escape", "cancel_turn", "Cancel turn"),
        Binding("ctrl+l", "new_chat", "New chat"),
        Binding("ctrl+o", "show_sessions", "Sessions"),
        Binding("ctrl+up", "focus_message(-1)", "Previous message", show=False),
        Binding("ctrl+down", "focus_message(1)", "Next message", show=False),
        Binding("ctrl+home", "first_message", "First message", show=False),
        Binding("ctrl+end", "latest_message", "Latest message", show=False),
    ]

    session_id: reactive[str | None] = reactive(None)
    """The session the next prompt continues; None until the first prompt starts one."""
    busy: reactive[bool] = reactive(False)
    """Whether a turn is running (or a slash command is getting its prompt)."""

    def __init__(self, host: Host) -> None:
        super().__init__()
        self.host = host
        self.commands: list[SlashCommand] = list(BUILTIN_COMMANDS)
        """The slash commands offered: the built-in ones, then the MCP servers' prompts."""
        self._commands_read = 0

    def compose(self) -> ComposeResult:
        with Horizontal(id="chat-header"):
            yield Label(self._title(), id="chat-title")
            yield Label("", id="chat-status")
            yield Label("", id="chat-unread")
        yield MessageList(
            f"Chatting with {self.host.model_label}.\n"
            "Type a message and press Enter. Shift+Enter or Ctrl+J starts a new line; "
            "/ lists the commands; Ctrl+Up moves up through the messages.",
            id="message-list")
        yield SlashMenu(id="slash-menu")
        yield PromptInput(placeholder="Message the model…  (/ for commands)", id="prompt-input")
        yield Footer()

    def on_mount(self) -> None:
        # The app counts unread notifications (it may be another app in tests).
        if hasattr(self.app, "unread"):
            self.watch(self.app, "unread", self._show_unread)
        self.query_one(SlashMenu).display = False
        self.prompt_input.focus()
        self.read_commands()

    @property
    def message_list(self) -> MessageList:
        return self.query_one(MessageList)

    @property
    def prompt_input(self) -> PromptInput:
        return self.query_one(PromptInput)

    @property
    def slash_menu(self) -> SlashMenu:
        return self.query_one(SlashMenu)

    # --- the header --------------------------------------------------------

    def _title(self) -> Text:
        # The model comes last: a long one (scripted:/some/path) is cut with an
        # ellipsis rather than pushing the session id out of sight.
        title = Text.assemble(("workbench", "bold"))
        if self.session_id:
            title.append("  ·  ")
            title.append(f"session {self.session_id[:SHORT_ID]}", style="dim")
        title.append("  ·  ")
        title.append(self._model_label())
        return title

    def _model_label(self) -> str:
        """The model this chat talks to: a resumed chat keeps its own."""
        if self.session_id:
            try:
                model = self.host.chats.get(self.session_id).get("model")
            except WorkbenchError:
                model = None
            if model and model != self.host.model:
                return str(model)
        return self.host.model_label

    def watch_session_id(self) -> None:
        for title in self.query("#chat-title").results(Label):
            title.update(self._title())

    def _show_unread(self, count: int) -> None:
        for label in self.query("#chat-unread").results(Label):
            label.update(f"  ✉ {count} unread · ^n" if count else "")

    def watch_busy(self, busy: bool) -> None:
        if not self.is_mounted:
            return
        # The screen may be closing (its children gone) when a turn's worker ends.
        for status in self.query("#chat-status").results(Label):
            status.update("● working — Esc cancels" if busy else "")
        for box in self.query(PromptInput):
            box.set_class(busy, "-busy")
        self.refresh_bindings()

    # --- prompts and turns -------------------------------------------------

    @on(PromptInput.Submitted)
    async def send_prompt(self, message: PromptInput.Submitted) -> None:
        text = message.text.strip()
        if not text:
            return
        if text.startswith("/"):
            name, _, rest = text.partition(" ")
            command = find(self.commands, name)
            if command is not None:
                message.prompt_input.clear()
                await self.run_command(command, rest.strip())
                return
        if self.busy:
            self.notify("A turn is still running; press Escape to cancel it.",
                        severity="warning")
            return
        message.prompt_input.clear()
        self.start_turn(text)

    def start_turn(self, text: str) -> None:
        """Send ``text`` as the person's message (remembered for Up in the prompt)."""
        self.prompt_input.remember(text)
        self.run_turn(text)

    @work(exclusive=True, group="turn")
    async def run_turn(self, text: str) -> None:
        """Send ``text`` to the host and remember the session it ran in."""
        self.busy = True
        try:
            if not self.message_list.following:
                await self.message_list.jump_to_end()
            result = await self.host.chats.send_prompt(text, session_id=self.session_id)
        except SessionBusyError as exc:  # another process runs a turn in this chat
            await self.message_list.add_notice(
                "warning", f"Not sent: {exc.message}. Press Up to bring your message back.")
        except WorkbenchError as exc:
            await self.message_list.add_notice("error", str(exc))
        except Exception as exc:
            said = self.host.store.disk_full(exc)
            if said is None:
                raise
            # Full before the turn could begin (its session or lease not written).
            await self.message_list.add_notice(
                "error", f"Not sent: the disk holding {self.host.store.path} is full "
                f"({said}). Free some space; press Up to bring your message back.")
        else:
            self.session_id = result.session_id
        finally:
            self.busy = False

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_turn":
            return self.busy
        return True

    def action_cancel_turn(self) -> None:
        """Cancel the running turn."""
        self.host.chats.cancel()
        self.workers.cancel_group(self, "slash")

    # --- chats ---------------------------------------------------------------

    def _refuse_while_busy(self, what: str) -> bool:
        if self.busy:
            self.notify(f"A turn is still running; press Escape to cancel it before {what}.",
                        severity="warning")
        return self.busy

    async def action_new_chat(self) -> None:
        """Start a new, empty chat; the next prompt begins a new session."""
        if self._refuse_while_busy("starting a new chat"):
            return
        self.workers.cancel_group(self, "history")
        self.session_id = None
        await self.message_list.clear()
        self.prompt_input.focus()

    def action_show_sessions(self) -> None:
        """List the chats, to resume one or start a new one."""
        if self._refuse_while_busy("switching chats"):
            return
        self.app.push_screen(SessionsScreen(self.host, self.session_id), self._session_chosen)

    async def _session_chosen(self, choice: SessionChoice | None) -> None:
        if choice is None:
            return
        if choice.session_id is None:
            await self.action_new_chat()
        else:
            self.resume(choice.session_id)

    @work(exclusive=True, group="history")
    async def resume(self, session_id: str) -> None:
        """Show the session's history; the next prompt continues it."""
        if self._refuse_while_busy("switching chats"):
            return
        try:
            session, entries, prompts = await asyncio.to_thread(self._read_session, session_id)
        except WorkbenchError as exc:
            self.notify(str(exc), severity="error")
            return
        await self.message_list.show_history(entries)
        self.session_id = session["id"]
        self.prompt_input.prompt_history = prompts
        self.prompt_input.focus()

    def _read_session(self, session_id: str) -> tuple[dict[str, Any], list[Entry], list[str]]:
        """The session, its history as the list shows it, and its prompts (in a thread)."""
        session = self.host.chats.get(session_id)
        rows = self.host.chats.messages(session["id"])
        prompts = [row["content"] for row in rows if row["role"] == "user" and row["content"]]
        return session, history_entries(rows), prompts

    # --- moving between messages -----------------------------------------------

    async def action_focus_message(self, step: int) -> None:
        """Move the focus to the message, card or bubble next to the focused one (up or down)."""
        await self.message_list.focus_item(step)

    async def action_first_message(self) -> None:
        """Show the first message of the chat."""
        await self.message_list.jump_to_start()

    async def action_latest_message(self) -> None:
        """Show the latest message and follow new ones."""
        await self.message_list.jump_to_end()

    @on(MessageList.FocusLeft)
    def back_to_prompt(self) -> None:
        self.prompt_input.focus()

    @on(ToolCallCard.CancelRequested)
    def cancel_call(self, message: ToolCallCard.CancelRequested) -> None:
        if not self.host.chats.cancel_call(message.call_id):
            self.notify("That call is not running any more.", severity="warning")

    # --- slash commands ----------------------------------------------------------

    def read_commands(self) -> None:
        """Read the MCP servers' prompts again, in a worker (after the extensions load)."""
        self._commands_read += 1
        self._read_commands(self._commands_read)

    @work(thread=True, group="commands")
    def _read_commands(self, reading: int) -> None:
        self.host.ensure_extensions()
        try:
            rows = self.host.mcp.prompts()
        except WorkbenchError:
            rows = []
        commands = list(BUILTIN_COMMANDS) + prompt_commands(rows)
        self.app.call_from_thread(self._set_commands, reading, commands)

    def _set_commands(self, reading: int, commands: list[SlashCommand]) -> None:
        if reading == self._commands_read:  # an older reading is out of date
            self.commands = commands

    @on(TextArea.Changed, "#prompt-input")
    def update_menu(self) -> None:
        text = self.prompt_input.text
        menu = self.slash_menu
        typing_command = text.startswith("/") and not any(c.isspace() for c in text)
        shown = matching(self.commands, text) if typing_command else []
        if shown:
            menu.show(shown)
        menu.display = bool(shown)
        self.prompt_input.menu_open = bool(shown)

    def _close_menu(self) -> None:
        self.slash_menu.display = False
        self.prompt_input.menu_open = False

    @on(PromptInput.MenuKey)
    async def menu_key(self, message: PromptInput.MenuKey) -> None:
        menu = self.slash_menu
        if message.key == "up":
            menu.action_cursor_up()
        elif message.key == "down":
            menu.action_cursor_down()
        elif message.key == "escape":
            self._close_menu()
        elif (command := menu.chosen) is not None:
            if message.key == "tab":
                # Completed, not run: Enter runs it; a prompt's arguments may follow on
                # the line (``city=Lyon``) or be asked for.
                self.prompt_input.load_text(command.name + (" " if command.arguments else ""))
                self.prompt_input.move_cursor(self.prompt_input.document.end)
                return
            self.prompt_input.clear()
            self._close_menu()
            await self.run_command(command, "")

    @on(OptionList.OptionSelected, "#slash-menu")
    async def menu_clicked(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        command = find(self.commands, message.option.id or "")
        self.prompt_input.clear()
        self._close_menu()
        self.prompt_input.focus()
        if command is not None:
            await self.run_command(command, "")

    async def run_command(self, command: SlashCommand, rest: str = "") -> None:
        """Run a slash command; an MCP prompt with arguments asks for them first."""
        if command.is_prompt:
            if self._refuse_while_busy("sending a prompt"):
                return
            given = _parse_arguments(rest)
            names = [str(a.get("name")) for a in command.arguments]
            missing = [a for a in command.arguments
                       if a.get("required") and a.get("name") not in given]
            if command.arguments and (missing or not given):
                self.app.push_screen(PromptArgumentsScreen(command),
                                     lambda values: self._prompt_arguments(command, values))
            else:
                self.send_mcp_prompt(command, {k: v for k, v in given.items() if k in names})
            return
        match command.name:
            case "/new":
                await self.action_new_chat()
            case "/sessions":
                self.action_show_sessions()
            case "/copy":
                self.copy_latest_reply()
            case "/help":
                await self.show_help()

    def _prompt_arguments(self, command: SlashCommand, values: dict[str, str] | None) -> None:
        if values is not None:
            self.send_mcp_prompt(command, values)

    @work(exclusive=True, group="slash")
    async def send_mcp_prompt(self, command: SlashCommand, arguments: dict[str, str]) -> None:
        """Get the prompt's messages from its server, then send their text as the
        person's message."""
        assert command.server is not None and command.prompt is not None
        self.busy = True
        self.query_one("#chat-status", Label).update(f"● getting {command.name}…")
        try:
            prompt = await self.host.mcp.get_prompt(command.server, command.prompt, arguments)
        except WorkbenchError as exc:
            await self.message_list.add_notice("error", f"{command.name}: {exc}")
            return
        finally:
            self.busy = False
        text = str(prompt.get("text") or "").strip()
        if not text:
            await self.message_list.add_notice("warning", f"{command.name} gave no text to send.")
            return
        self.start_turn(text)

    def copy_latest_reply(self) -> None:
        """Copy the model's latest reply to the clipboard."""
        reply = next((e.text for e in reversed(self.message_list.entries)
                      if e.kind == "message" and e.role == "assistant" and e.text), None)
        if reply is None:
            self.notify("There is no reply to copy yet.", severity="warning")
            return
        self.app.copy_to_clipboard(reply)
        self.notify(f"Copied the latest reply ({len(reply)} characters).", title="Copied")

    async def show_help(self) -> None:
        """Say which slash commands there are, and the keys."""
        lines = ["Slash commands:"]
        lines += [f"  {c.name}  {c.description}" for c in self.commands]
        lines.append(KEYS_HELP)
        await self.message_list.add_notice("info", "\n".join(lines))

    # --- core events -------------------------------------------------------

    async def on_core_event(self, message: CoreEvent) -> None:
        event = message.event
        messages = self.message_list
        if not messages.is_attached:
            return  # The app is closing; a cancelled turn still reports its end.
        match event:
            case SessionStarted():
                self.session_id = event.session_id
            case TextDelta():
                await messages.append_text(event.message_id, event.text)
            case MessageEnded():
                await messages.end_message(event.message_id, event.role, event.text)
            case ToolCallStarted():
                await messages.start_tool_call(event.call_id, event.tool, event.arguments)
            case ToolCallProgress():
                messages.tool_progress(event.call_id, event.progress, event.label,
                                       event.description)
            case ToolCallLog():
                messages.tool_log(event.call_id, f"{event.level}: {event.message}")
            case ToolCallEnded():
                await messages.end_tool_call(event.call_id, event.tool, event.ok,
                                             event.result, event.error)
            case DisplayBubble():
                await messages.add_display(event.display, event.payload)
            case TurnEnded(status="error"):
                await messages.add_notice("error", event.error or "the turn failed")
            case TurnEnded(status="cancelled"):
                await messages.add_notice("info", "Cancelled.")
            case Notice():
                await messages.add_notice(event.level, event.message)
            case ExtensionStatusChanged():
                self.read_commands()


def _parse_arguments(text: str) -> dict[str, str]:
    """The arguments typed after a prompt command, read as ``workbench run`` reads them
    (``NAME=VALUE`` words, quoted as a shell quotes, or a JSON object); what cannot be
    read gives none, so the arguments form opens."""
    from workbench.core.mcp_prompting import parse_prompt_arguments

    try:
        return parse_prompt_arguments(text)
    except WorkbenchError:
        return {}

