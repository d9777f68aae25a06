"""A tool call in the chat: its name, its arguments in short, progress, then the outcome."""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import ProgressBar, Static

ARGUMENTS_WIDTH = 72
RESULT_WIDTH = 200


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


class ToolCallCard(Vertical):
    """One tool call; the screen feeds it progress and the outcome.

    States are the classes ``-running``, ``-ok`` and ``-error``.

    Args:
        call_id: The call's id, as the events carry it.
        tool: The tool's qualified name.
        arguments: The call's arguments, or None when they are not known (a call
            refused before it started).
    """

    DEFAULT_CSS = """
    ToolCallCard {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        border: round $border-blurred;
        border-title-color: $text-primary;
        border-title-style: bold;
        &.-running {
            border: round $primary 60%;
        }
        &.-ok {
            border: round $success 50%;
        }
        &.-error {
            border: round $error 70%;
        }
        & > .tool-call-card--arguments {
            height: 1;
            color: $text-muted;
            text-wrap: nowrap;
            text-overflow: ellipsis;
        }
        & > ProgressBar {
            height: 1;
        }
        & > .tool-call-card--log {
            height: 1;
            color: $text-muted;
            text-wrap: nowrap;
            text-overflow: ellipsis;
        }
        & > .tool-call-card--outcome {
            height: auto;
            max-height: 6;
        }
        &.-ok > .tool-call-card--outcome {
            color: $text-success;
        }
        &.-error > .tool-call-card--outcome {
            color: $text-error;
        }
    }
    """

    def __init__(self, call_id: str, tool: str, arguments: Any = None) -> None:
        super().__init__(classes="-running")
        self.call_id = call_id
        self.tool = tool
        self.arguments = arguments
        self.ok: bool | None = None
        """None while running, then whether the call succeeded."""
        self.outcome = ""
        """The outcome line once the call ended: ``✓ result`` or ``✗ error``."""
        self.border_title = Text(tool)

    def compose(self) -> ComposeResult:
        if self.arguments is not None:
            summary = summarize_arguments(self.arguments) if self.arguments else "(no arguments)"
            yield Static(Text(summary), classes="tool-call-card--arguments")
        yield ProgressBar(total=100, show_eta=False)
        log = Static("", classes="tool-call-card--log")
        log.display = False
        yield log
        outcome = Static("", classes="tool-call-card--outcome")
        outcome.display = False
        yield outcome

    def set_progress(self, progress: float, label: str | None = None) -> None:
        """Show how far along the call is, from 0 to 1."""
        self.query_one(ProgressBar).update(progress=max(0.0, min(1.0, progress)) * 100)
        if label:
            self.add_log(label)

    def add_log(self, message: str) -> None:
        """Show the call's latest log line (or progress label) under the bar."""
        log = self.query_one(".tool-call-card--log", Static)
        log.update(Text(shorten(message, RESULT_WIDTH)))
        log.display = True

    def finish(self, ok: bool, result: Any = None, error: dict[str, Any] | None = None) -> None:
        """Show the outcome: ✓ and a short result, or ✗ and the error's message."""
        self.ok = ok
        if ok:
            self.outcome = f"✓ {summarize_result(result)}"
        else:
            message = (error or {}).get("message") or "the call failed"
            self.outcome = f"✗ {message}"
        self.query_one(ProgressBar).display = False
        self.query_one(".tool-call-card--log", Static).display = False
        outcome = self.query_one(".tool-call-card--outcome", Static)
        outcome.update(Text(self.outcome))
        outcome.display = True
        self.set_class(ok, "-ok")
        self.set_class(not ok, "-error")
        self.remove_class("-running")
