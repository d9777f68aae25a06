"""A tool call in the chat: its arguments, live progress, its log on demand, the outcome.

What the card shows lives in a ``ToolCallState``, which the conversation keeps while
the card is not mounted (scrolled far away) and hands to the next card it builds.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import ProgressBar, Static

from workbench.tui.paths import shown_path

ARGUMENTS_WIDTH = 72
RESULT_WIDTH = 200
LOG_LINES_KEPT = 500
"""Log lines a card keeps; older ones are counted, not kept."""
LOG_LINES_SHOWN = 8
"""Log lines an open card shows: the latest ones."""


def shorten(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: max(0, width - 1)] + "…"


def _value(value: Any) -> str:
    return value if isinstance(value, str) and value and " " not in value else json.dumps(
        value, ensure_ascii=False, default=str)


def summarize_arguments(arguments: Any, width: int = ARGUMENTS_WIDTH) -> str:
    """Arguments as ``key=value`` pairs on one short line."""
    if isinstance(arguments, dict):
        text = " ".join(f"{key}={_value(value)}" for key, value in arguments.items())
    else:
        text = json.dumps(arguments, ensure_ascii=False, default=str)
    return shorten(text, width)


def summarize_result(result: Any, width: int = RESULT_WIDTH) -> str:
    """A result on one short line: scalars as they are, objects as ``key=value`` pairs."""
    if result is None:
        return "done"
    if isinstance(result, str):
        return shorten(result, width) or '""'
    if isinstance(result, dict):
        return summarize_arguments(result, width)
    return shorten(json.dumps(result, ensure_ascii=False, default=str), width)


_PROJECT = re.compile(r"this project \((/[^)\n]*)\)")


@dataclass(eq=False)
class ToolCallState:
    """Everything a card shows about one call; kept while its card is not mounted."""

    call_id: str
    tool: str
    arguments: Any = None
    """The call's arguments, or None when they are not known (refused before it started)."""
    progress: float = 0.0
    """How far along, from 0 to 1."""
    label: str = ""
    """The tool's latest progress label."""
    description: str = ""
    """The tool's latest progress description."""
    logs: list[str] = field(default_factory=list)
    """The latest ``LOG_LINES_KEPT`` log lines, ``level: message``."""
    log_count: int = 0
    """Every log line the call wrote, kept or not."""
    logs_open: bool = False
    """Whether the card shows its log."""
    ok: bool | None = None
    """None while running, then whether the call succeeded."""
    outcome: str = ""
    """The outcome line once the call ended: ``✓ result`` or ``✗ error``."""
    stopping: bool = False
    """Whether the person asked to cancel the call and it has not ended yet."""
    change_set: int | None = None
    """The change set the call applied to the project (a shell command's), which ``u``
    undoes; None when it applied none."""
    undone: str = ""
    """What undoing the change set did, once it was undone."""

    @property
    def running(self) -> bool:
        return self.ok is None

    def set_progress(self, progress: float, label: str | None = None,
                     description: str | None = None) -> None:
        self.progress = max(0.0, min(1.0, progress))
        if label is not None:
            self.label = label
        if description is not None:
            self.description = description

    def add_log(self, line: str) -> None:
        self.logs.append(line)
        self.log_count += 1
        if len(self.logs) > LOG_LINES_KEPT:
            del self.logs[: len(self.logs) - LOG_LINES_KEPT]

    def finish(self, ok: bool, result: Any = None, error: dict[str, Any] | None = None) -> None:
        self.ok = ok
        self.stopping = False
        found = result.get("change_set") if ok and isinstance(result, dict) else None
        self.change_set = found if isinstance(found, int) and not isinstance(found, bool) else None
        if ok:
            self.outcome = f"✓ {summarize_result(result)}"
        else:
            message = (error or {}).get("message") or "the call failed"
            # The project a refusal names is shown as the prompt showed it (~/work).
            message = _PROJECT.sub(lambda m: f"this project ({shown_path(m.group(1))})", message)
            self.outcome = f"✗ {message}"


class ToolCallActions(Static):
    """The card's line of clickable actions: ``▸ N log lines`` and ``✕ cancel``."""

    class Chosen(Message):
        """An action on the line was clicked: ``logs`` or ``cancel``."""

        def __init__(self, action: str) -> None:
            super().__init__()
            self.action = action

    def action_choose(self, action: str) -> None:
        self.post_message(self.Chosen(action))


class ToolCallCard(Vertical, can_focus=True):
    """One tool call; the conversation feeds it progress, log lines and the outcome.

    States are the classes ``-running``, ``-ok`` and ``-error``; ``-logs-open`` while
    the log shows.

    | Key | Does |
    | --- | --- |
    | l, enter | Show or hide the call's log. |
    | x | Cancel this call (only while it runs; the turn goes on): asks, ``x`` again does it. |
    | u | Undo the change the call made to the project (a shell command's change set): asks, ``u`` again does it. |
    | c | Copy the outcome (or the arguments while it runs). |

    The two keys that undo something ask first, on the card: a person who focused the
    card and then typed a word beginning with ``u`` or ``x`` has asked for nothing, so
    any other key answers no and goes to the prompt with the letter before it
    (``TypedAway``); Esc answers no and goes back to the prompt.

    Clicking the ``▸ log`` line toggles the log; clicking ``✕ cancel`` cancels.

    Args:
        call_id: The call's id, as the events carry it.
        tool: The tool's qualified name.
        arguments: The call's arguments, or None when they are not known (a call
            refused before it started).
        state: What an earlier card of the same call showed; a new state when None.
    """

    BINDINGS = [
        Binding("l,enter", "toggle_logs", "Log"),
        Binding("x", "ask('cancel_call')", "Cancel call"),
        Binding("u", "ask('undo_change')", "Undo change"),
        Binding("c", "copy", "Copy"),
    ]

    DEFAULT_CSS = """
    ToolCallCard {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        border: round $border-blurred;
        border-title-color: $text-primary;
        border-title-style: bold;
        &.-running { border: round $primary 60%; }
        &.-ok { border: round $success 50%; }
        &.-error { border: round $error 70%; }
        &:focus {
            background: $accent 6%;
            border-title-color: $text-accent;
            &.-running { border: round $primary; }
            &.-ok { border: round $success; }
            &.-error { border: round $error; }
        }
        & > Static { height: auto; }
        & > .tool-call-card--arguments {
            height: 1;
            color: $text-muted;
            text-wrap: nowrap;
            text-overflow: ellipsis;
        }
        & > .tool-call-card--label {
            height: 1;
            text-wrap: nowrap;
            text-overflow: ellipsis;
        }
        & > ProgressBar {
            height: 1;
            width: 100%;
            & > Bar { width: 1fr; }
        }
        & > .tool-call-card--actions {
            height: 1;
            color: $text-secondary;
            text-wrap: nowrap;
            text-overflow: ellipsis;
        }
        & > .tool-call-card--log {
            color: $text-muted;
            background: $surface;
            padding: 0 1;
        }
        & > .tool-call-card--outcome { max-height: 6; }
        & > .tool-call-card--change { height: 1; color: $text-secondary; }
        & > .tool-call-card--question { height: auto; color: $text-warning; display: none; }
        &.-ok > .tool-call-card--outcome { color: $text-success; }
        &.-error > .tool-call-card--outcome { color: $text-error; }
    }
    """

    class _FromCard(Message):
        """A message about one card (its ``control``)."""

        def __init__(self, card: ToolCallCard) -> None:
            super().__init__()
            self.card = card

        @property
        def control(self) -> ToolCallCard:
            return self.card

    class CancelRequested(_FromCard):
        """The person asked to cancel this card's call."""

        def __init__(self, card: ToolCallCard) -> None:
            super().__init__(card)
            self.call_id = card.call_id

    class UndoRequested(_FromCard):
        """The person asked to undo the change set this card's call applied."""

        def __init__(self, card: ToolCallCard, change_set: int) -> None:
            super().__init__(card)
            self.change_set = change_set

    class TypedAway(_FromCard):
        """Keys pressed on the card were typing, not actions: ``text`` goes to the prompt."""

        def __init__(self, card: ToolCallCard, text: str) -> None:
            super().__init__(card)
            self.text = text

    ASKING = {"undo_change": ("u", "Undo change set {change_set}? u again undoes it · any other key, no"),
              "cancel_call": ("x", "Cancel this call? x again cancels it · any other key, no")}
    """The actions a key asks about before doing: their key and the question."""

    def __init__(self, call_id: str, tool: str, arguments: Any = None, *,
                 state: ToolCallState | None = None) -> None:
        super().__init__()
        self.state = state or ToolCallState(call_id, tool, arguments)
        self.asking: str | None = None
        """The action (``undo_change``, ``cancel_call``) the card asks about, if any."""
        self.border_title = Text(self.state.tool)
        self._set_state_classes()

    # --- what the card shows -------------------------------------------------

    @property
    def call_id(self) -> str:
        return self.state.call_id

    @property
    def tool(self) -> str:
        return self.state.tool

    @property
    def arguments(self) -> Any:
        return self.state.arguments

    @property
    def ok(self) -> bool | None:
        """None while running, then whether the call succeeded."""
        return self.state.ok

    @property
    def outcome(self) -> str:
        """The outcome line once the call ended: ``✓ result`` or ``✗ error``."""
        return self.state.outcome

    @property
    def logs_open(self) -> bool:
        return self.state.logs_open

    def compose(self) -> ComposeResult:
        state = self.state
        if state.arguments is not None:
            summary = summarize_arguments(state.arguments) if state.arguments else "(no arguments)"
            yield Static(Text(summary), classes="tool-call-card--arguments")
        # A finished card (most of a long chat's) is two or three lines: only what it
        # can still show is composed.
        if state.running:
            yield Static(self._label(), classes="tool-call-card--label")
            yield ProgressBar(total=100, show_eta=False)
        if state.running or state.log_count:
            yield ToolCallActions(self._actions(), classes="tool-call-card--actions")
            yield Static(self._log_text(), classes="tool-call-card--log")
        yield Static(Text(state.outcome), classes="tool-call-card--outcome")
        yield Static(self._change_text(), classes="tool-call-card--change")
        yield Static("", classes="tool-call-card--question")

    def _change_text(self) -> Content:
        state = self.state
        if state.change_set is None:
            return Content("")
        if state.undone:
            return Content.styled(f"change set {state.change_set}: {state.undone}", "$text-muted")
        return Content.from_markup("[@click=undo_change]↶ undo change set $id[/] [dim](u)[/]",
                                   id=str(state.change_set))

    def on_mount(self) -> None:
        self._refresh_parts()

    def _set_state_classes(self) -> None:
        state = self.state
        self.set_class(state.running, "-running")
        self.set_class(state.ok is True, "-ok")
        self.set_class(state.ok is False, "-error")
        self.set_class(state.logs_open, "-logs-open")

    def _label(self) -> Text:
        state = self.state
        if state.stopping:
            return Text("cancelling…", style="italic")
        text = Text(state.label or "running…", style="" if state.label else "italic")
        if state.description:
            text.append(f" — {state.description}", style="dim")
        return text

    def _actions(self) -> Content:
        state = self.state
        parts: list[Content] = []
        if state.log_count:
            arrow = "▾" if state.logs_open else "▸"
            lines = f"{state.log_count} log line{'s' if state.log_count != 1 else ''}"
            parts.append(Content.from_markup(f"[@click=choose('logs')]$arrow {lines}[/] [dim](l)[/]",
                                             arrow=arrow))
        if state.running and not state.stopping:
            parts.append(Content.from_markup("[@click=choose('cancel')]✕ cancel[/] [dim](x)[/]"))
        return Content("   ").join(parts)

    def _log_text(self) -> Text:
        state = self.state
        shown = state.logs[-LOG_LINES_SHOWN:]
        text = Text()
        hidden = state.log_count - len(shown)
        if hidden:
            text.append(f"… {hidden} earlier line{'s' if hidden != 1 else ''}\n", style="italic")
        text.append("\n".join(shown))
        return text

    def _refresh_parts(self) -> None:
        """Bring every part up to date with the state."""
        state = self.state
        self._set_state_classes()
        for actions in self.query(ToolCallActions):
            actions.update(self._actions())
            actions.display = bool(state.log_count) or state.running
        for log in self.query(".tool-call-card--log").results(Static):
            log.display = state.logs_open and bool(state.log_count)
            if log.display:
                log.update(self._log_text())
        for change in self.query(".tool-call-card--change").results(Static):
            change.update(self._change_text())
            change.display = state.change_set is not None
        outcome = self.query_one(".tool-call-card--outcome", Static)
        outcome.update(Text(state.outcome))
        outcome.display = not state.running
        for question in self.query(".tool-call-card--question").results(Static):
            asked = self.ASKING.get(self.asking or "")
            question.display = asked is not None
            if asked is not None:
                question.update(Text(asked[1].format(change_set=state.change_set)))
        for bar in self.query(ProgressBar):
            bar.update(progress=state.progress * 100)
            bar.display = state.running
        for label in self.query(".tool-call-card--label").results(Static):
            label.update(self._label())
            label.display = state.running

    # --- what the conversation tells it --------------------------------------

    def set_progress(self, progress: float, label: str | None = None,
                     description: str | None = None) -> None:
        """Show how far along the call is, from 0 to 1, with the tool's label."""
        self.state.set_progress(progress, label, description)
        self._refresh_parts()

    def add_log(self, message: str) -> None:
        """Add a line to the call's log (shown when the log is open)."""
        self.state.add_log(message)
        self._refresh_parts()

    def finish(self, ok: bool, result: Any = None, error: dict[str, Any] | None = None) -> None:
        """Show the outcome: ✓ and a short result, or ✗ and the error's message."""
        self.state.finish(ok, result, error)
        self._refresh_parts()

    # --- what the person does -------------------------------------------------

    def ask(self, action: str) -> None:
        """Ask on the card before ``action`` (a key in ``ASKING``) is done."""
        if self.check_action(action, ()) is not True:
            getattr(self, f"action_{action}")()  # says why it cannot
            return
        self.asking = action
        self._refresh_parts()
        self.call_after_refresh(self.scroll_visible, animate=False)

    def _stop_asking(self) -> None:
        if self.asking is not None:
            self.asking = None
            self._refresh_parts()

    def on_key(self, event: events.Key) -> None:
        """While the card asks: its key again does it; Esc says no (back to the prompt);
        a printable key says no and is typed in the prompt after the asking letter, so
        nothing typed is lost; any other key (an arrow, Tab) says no and does its work."""
        if self.asking is None:
            return
        action, (letter, _question) = self.asking, self.ASKING[self.asking]
        self._stop_asking()
        if event.key == letter:
            getattr(self, f"action_{action}")()
        elif event.key == "escape":
            self.post_message(self.TypedAway(self, ""))
        elif event.is_printable and event.character:
            self.post_message(self.TypedAway(self, letter + event.character))
        else:
            return
        event.stop()
        event.prevent_default()

    def on_blur(self) -> None:
        self._stop_asking()

    def action_toggle_logs(self) -> None:
        """Show or hide the call's log."""
        if not self.state.log_count:
            self.notify("This call has written no log lines.", severity="information")
            return
        self.state.logs_open = not self.state.logs_open
        self._refresh_parts()
        if self.state.logs_open:
            self.call_after_refresh(self.scroll_visible, animate=False)

    def action_cancel_call(self) -> None:
        """Ask to cancel this call (the chat screen does it)."""
        if not self.state.running or self.state.stopping:
            return
        self.state.stopping = True
        self._refresh_parts()
        self.post_message(self.CancelRequested(self))

    def action_undo_change(self) -> None:
        """Undo the change this call made to the project (the chat screen does it)."""
        state = self.state
        if state.change_set is None or state.undone:
            self.notify("This call made no change to undo." if state.change_set is None
                        else f"Change set {state.change_set} was undone already.",
                        severity="information")
            return
        self.post_message(self.UndoRequested(self, state.change_set))

    def undone(self, summary: str) -> None:
        """Show that the card's change set was undone (``summary`` says how)."""
        self.state.undone = summary
        self._refresh_parts()

    def action_copy(self) -> None:
        """Copy the outcome, or the arguments while the call runs."""
        state = self.state
        text = state.outcome or json.dumps(state.arguments, ensure_ascii=False, default=str)
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied the {'outcome' if state.outcome else 'arguments'} of {state.tool}.",
                    title="Copied")

    def action_ask(self, action: str) -> None:
        self.ask(action)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "ask":
            return self.check_action(str(parameters[0]), ()) if parameters else None
        if action == "cancel_call":
            return self.state.running and not self.state.stopping
        if action == "toggle_logs":
            return True if self.state.log_count else None
        if action == "undo_change":
            # Only a call that changed files offers it: hidden, not dimmed, on the rest.
            return self.state.change_set is not None and not self.state.undone
        return True

    def on_tool_call_actions_chosen(self, message: ToolCallActions.Chosen) -> None:
        message.stop()
        if message.action == "cancel":
            self.action_cancel_call()
        else:
            self.action_toggle_logs()
