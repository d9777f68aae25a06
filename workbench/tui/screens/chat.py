"""The chat screen: the conversation, the prompt box, slash commands and the keys.

Prompts go to the host from a worker; what happens in the turn comes back as
``CoreEvent`` messages from the app's event bridge and is drawn by ``MessageList``.
Earlier chats are listed by ``SessionsScreen`` and resumed here; ``/`` in the prompt
offers the built-in commands and the MCP servers' prompts. ``/model NAME`` (or the
palette's "Model") switches this chat's model through ``host.chat_models.choose_model``; the header
shows what the chat talks to (``host.chat_models.model_info``), and says so when the replies are
only echoes.
"""

from __future__ import annotations

import asyncio
from typing import Any

from rich.text import Text
from textual import events, on, work
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
from workbench.tui.slash_commands import (BUILTIN_COMMANDS, MODEL, SlashCommand, find,
                                          matching, model_commands, prompt_commands)
from workbench.tui.widgets.message_list import Entry, MessageList, history_entries
from workbench.tui.widgets.prompt_input import PromptInput
from workbench.tui.widgets.slash_menu import SlashMenu
from workbench.tui.widgets.switch_pills import SwitchPills
from workbench.tui.widgets.tool_call_card import ToolCallCard

SHORT_ID = 8

KEYS_HELP = (
    "Keys: Enter sends · Shift+Enter or Ctrl+J breaks the line · Up/Down in an empty "
    "prompt bring back earlier prompts · ? in an empty prompt opens the help · Esc cancels "
    "the turn · Ctrl+L new chat · Ctrl+O earlier chats · Ctrl+Up/Ctrl+Down move between "
    "messages, cards and bubbles (then Up/Down, Home/End) · on a message: C copies it · on "
    "a tool card: L shows its log, X cancels the call · Esc, or typing, goes back to the "
    "prompt · Ctrl+Home/Ctrl+End jump to the first/latest message."
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
    model_info: reactive[dict[str, Any] | None] = reactive(None)
    """What the chat talks to (``host.chat_models.model_info``), once read; None before."""

    def __init__(self, host: Host) -> None:
        super().__init__()
        self.host = host
        self.commands: list[SlashCommand] = list(BUILTIN_COMMANDS)
        """The slash commands offered: the built-in ones, then the MCP servers' prompts."""
        self._commands_read = 0
        self._model_choices: list[SlashCommand] | None = None
        """The models ``/model `` offers, read when it is typed (None: not read yet)."""
        self._infos_read = 0

    def compose(self) -> ComposeResult:
        with Horizontal(id="chat-header"):
            yield Label(self._title(), id="chat-title")
            yield Label("", id="chat-status")
            yield Label("", id="chat-unread")
        yield MessageList(
            f"Chatting with {self.host.default_model.label}.\n"
            "Type a message and press Enter. Shift+Enter or Ctrl+J starts a new line; "
            "/ lists the commands; Ctrl+Up moves up through the messages.",
            id="message-list")
        yield SlashMenu(id="slash-menu")
        yield SwitchPills(id="chat-switches")
        yield PromptInput(placeholder="Message the model…  (/ for commands)", id="prompt-input")
        yield Footer()

    def on_mount(self) -> None:
        # The app counts unread notifications (it may be another app in tests).
        if hasattr(self.app, "unread"):
            self.watch(self.app, "unread", self._show_unread)
        self.query_one(SlashMenu).display = False
        self.prompt_input.focus()
        self.call_after_refresh(self.read_commands)  # it waits for the extensions: after the first frame
        self.read_model_info()
        self.query_one(SwitchPills).display = False
        self.call_after_refresh(self.read_switches)

    # --- plugins' composer switches ----------------------------------------------

    @work(thread=True, exclusive=True, group="chat-switches")
    def read_switches(self) -> None:
        """Read this chat's plugin switches again (``host.plugin_ui.switches``)."""
        try:
            rows = self.host.plugin_ui.switches(self.session_id or "")
        except Exception:  # noqa: BLE001 — no pills rather than a broken chat
            rows = []
        self.app.call_from_thread(self.call_later, self._show_switches, rows)

    async def _show_switches(self, rows: Any) -> None:
        if self.is_attached:
            await self.query_one(SwitchPills).show(rows)

    def on_switch_pills_turned(self, message: SwitchPills.Turned) -> None:
        self.app.run_worker(self._turn_switch(message.plugin, message.switch, message.on),
                            group="chat-switch-turn", exit_on_error=False)

    async def _turn_switch(self, plugin: str, switch: str, on: bool) -> None:
        if self.session_id is None:  # a switch is the chat's: the chat starts here
            self.session_id = (await asyncio.to_thread(self.host.chats.new))["id"]
        try:
            await self.host.plugin_ui.turn_switch(self.session_id, plugin, switch, on)
        except WorkbenchError:
            pass  # the pill turns back as read again
        if self.is_attached:
            self.read_switches()

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

    def _model_label(self) -> Text:
        """The model this chat talks to (a resumed chat keeps its own), and whether the
        replies are a model's or only echoes."""
        info = self.model_info
        if info is None:
            return Text(self.host.default_model.label)
        label = Text(str(info["label"]))
        if info.get("problem"):
            label.append(f"  (cannot start: {info['problem']})", style="bold red")
        elif info["stand_in"]:
            label.append("  ·  not a model: replies only echo you (/model)", style="bold yellow")
        return label

    def watch_session_id(self) -> None:
        self._show_title()
        if self.is_mounted:
            self.read_model_info()
            self.read_switches()

    def watch_model_info(self) -> None:
        self._show_title()

    def _show_title(self) -> None:
        for title in self.query("#chat-title").results(Label):
            title.update(self._title())

    def read_model_info(self) -> None:
        """Read what the chat talks to again, in a thread (``auto`` is resolved)."""
        self._infos_read += 1
        self._read_model_info(self._infos_read, self.session_id)

    @work(thread=True, group="model-info")
    def _read_model_info(self, reading: int, session_id: str | None) -> None:
        try:
            info = self.host.chat_models.model_info(session_id)
        except WorkbenchError as exc:
            spec = self.host.default_model.spec
            try:
                if session_id is not None:
                    spec = self.host.chats.get(session_id).get("model") or spec
            except WorkbenchError:
                pass
            info = {"spec": spec, "label": spec, "own": False, "stand_in": False, "hint": None,
                    "problem": exc.message}
        self.app.call_from_thread(self._set_model_info, reading, info)

    def _set_model_info(self, reading: int, info: dict[str, Any]) -> None:
        if reading == self._infos_read:  # an older reading is out of date
            self.model_info = info

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

    @work(group="sent-early")
    async def send_in_order(self, texts: list[str]) -> None:
        """Send what was sent before the chat was there, as if typed now: each message
        once the one before it has ended, a slash command once its work has."""
        for text in texts:
            if text.startswith("/"):
                name, _, rest = text.partition(" ")
                command = find(self.commands, name)
                if command is not None:
                    await self.run_command(command, rest.strip())
                    await self.workers.wait_for_complete(
                        [worker for worker in self.workers
                         if worker.node is self and worker.group in ("model", "slash")])
                    continue
            self.prompt_input.remember(text)
            await self.run_turn(text).wait()

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
            full = self.host.chats.disk_full(exc)
            if full is None:
                raise
            # Full before the turn could begin (its session or lease not written).
            said, where = full
            await self.message_list.add_notice(
                "error", f"Not sent: the disk holding {where} is full "
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
        displays = self.host.chats.call_displays(session["id"])
        prompts = [row["content"] for row in rows if row["role"] == "user" and row["content"]]
        return session, history_entries(rows, displays), prompts

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

    def on_key(self, event: events.Key) -> None:
        """Away from the prompt (on a message, a card, a bubble): Esc comes back to it
        before it cancels anything, and a printable key no binding there takes comes
        back to it and is typed there."""
        box = self.prompt_input
        focused = self.focused
        if focused is None or focused is box:
            return
        if event.key == "escape":
            event.stop()
            event.prevent_default()
            box.focus()
        elif event.is_printable and event.character and event.key not in self.active_bindings:
            event.stop()
            event.prevent_default()
            box.focus()
            box.insert(event.character)

    @on(PromptInput.HelpAsked)
    async def open_help(self) -> None:
        await self.app.run_action("open('help')")

    @on(ToolCallCard.CancelRequested)
    def cancel_call(self, message: ToolCallCard.CancelRequested) -> None:
        if not self.host.chats.cancel_call(message.call_id):
            self.notify("That call is not running any more.", severity="warning")

    @on(ToolCallCard.TypedAway)
    def typed_on_a_card(self, message: ToolCallCard.TypedAway) -> None:
        self.prompt_input.focus()
        if message.text:
            self.prompt_input.insert(message.text)

    @on(ToolCallCard.UndoRequested)
    def undo_change(self, message: ToolCallCard.UndoRequested) -> None:
        self._undo_change(message.card, message.change_set)

    @work(group="undo")
    async def _undo_change(self, card: ToolCallCard, change_set: int) -> None:
        """``host.changes.aundo`` (a shell change set is put back in a thread, an
        extension's undo tool called as the person); the card and a notice say what it did."""
        try:
            answer = await self.host.changes.aundo(change_set)
        except WorkbenchError as exc:
            self.notify(exc.message, severity="warning")
            return
        kept = answer["kept"]
        summary = answer["state"] + (f", {len(kept)} kept as you changed them" if kept else "")
        lines = [f"Change set {change_set}: {summary}."] + [f"kept {k['path']}: {k['why']}" for k in kept[:5]]
        if "result" in answer:
            lines = [f"Change {change_set} undone: {answer['restored'][0]}"]
        card.undone(summary)
        self.notify("\n".join(lines), title="Undo")

    # --- slash commands ----------------------------------------------------------

    def read_commands(self) -> None:
        """Read the MCP servers' prompts again, in a worker (after the extensions load)."""
        self._commands_read += 1
        self._read_commands(self._commands_read)

    @work(thread=True, group="commands")
    def _read_commands(self, reading: int) -> None:
        self.host.loading.ensure()
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
        head, space, typed = text.partition(" ")
        if space and head.lower() == MODEL and "\n" not in text:
            shown = self._models_matching(typed)
            menu.border_title = "models"
        else:
            self._model_choices = None  # read again the next time /model is typed
            typing_command = text.startswith("/") and not any(c.isspace() for c in text)
            shown = matching(self.commands, text) if typing_command else []
            menu.border_title = "commands"
        if shown:
            menu.show(shown)
        menu.display = bool(shown)
        self.prompt_input.menu_open = bool(shown)

    def _models_matching(self, typed: str) -> list[SlashCommand]:
        """The models for what follows ``/model ``; read from the core first (the menu
        opens once they are)."""
        if self._model_choices is None:
            self._model_choices = []
            self._read_model_choices(self.session_id)
            return []
        typed = typed.strip().lower()
        starting = [c for c in self._model_choices if (c.model_spec or "").lower().startswith(typed)]
        return starting + [c for c in self._model_choices if c not in starting
                           and typed in f"{c.model_spec} {c.description}".lower()]

    @work(thread=True, exclusive=True, group="model-choices")
    def _read_model_choices(self, session_id: str | None) -> None:
        rows = self.host.chat_models.model_choices(session_id)
        self.app.call_from_thread(self._set_model_choices, model_commands(rows))

    def _set_model_choices(self, choices: list[SlashCommand]) -> None:
        if self._model_choices is not None:  # still typing /model
            self._model_choices = choices
            self.update_menu()

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
                more = command.arguments or command.takes_argument
                self.prompt_input.load_text(command.name + (" " if more else ""))
                self.prompt_input.move_cursor(self.prompt_input.document.end)
                return
            self.prompt_input.clear()
            self._close_menu()
            await self._run_chosen(command)

    @on(OptionList.OptionSelected, "#slash-menu")
    async def menu_clicked(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        command = find(self.slash_menu.commands, message.option.id or "")
        self.prompt_input.clear()
        self._close_menu()
        self.prompt_input.focus()
        if command is not None:
            await self._run_chosen(command)

    async def _run_chosen(self, command: SlashCommand) -> None:
        """Run a command chosen in the menu: a model offered after ``/model `` switches
        to it; ``/model`` alone offers the models."""
        if command.model_spec is not None:
            self.switch_model(command.model_spec)
        else:
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
            case "/model":
                if rest:
                    self.switch_model(rest)
                else:
                    self.action_choose_model()
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

    def action_choose_model(self) -> None:
        """Switch this chat's model: the prompt offers the models (Tab completes, Enter switches)."""
        box = self.prompt_input
        box.focus()
        box.load_text(f"{MODEL} ")
        box.move_cursor(box.document.end)

    @work(exclusive=True, group="model")
    async def switch_model(self, spec: str) -> None:
        """Make this chat talk to ``spec`` from its next turn on (a chat not started yet
        is started for it); a name that is no model is said, and nothing changes."""
        if self._refuse_while_busy("switching the model"):
            return
        try:
            session = await asyncio.to_thread(self.host.chat_models.choose_model, self.session_id, spec)
        except WorkbenchError as exc:
            await self.message_list.add_notice("error", f"The model was not changed: {exc}")
            return
        self.session_id = session["id"]
        self.read_model_info()
        following = not session.get("model")
        chosen = self.host.default_model.spec if following else session["model"]
        await self.message_list.add_notice(
            "info", f"This chat now talks to {chosen}"
            + (" (the default)." if following else " (this chat only; /model default follows the default again)."))

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

