"""The permission prompt: a tool needs something it was not granted.

It names the tool and each permission it asks for, in words, with the author's
reason; optional ones are marked, and broad ones (the whole file system, the home
folder, any network host) stand out. The same prompt comes for a tool's
permissions before it starts and for a capability (memories, the model, speech) it
reaches for while running. The person answers with a key or a button: once, for
the session, always, or deny. The screen dismisses with the decision;
``TuiResponder`` turns it into the core's answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from workbench.events import PermissionRequest
from workbench.tui.paths import shown_path

DECISIONS = ("once", "session", "always", "deny")

VERBS = {"read": "Read", "write": "Write to", "net": "Connect to", "run": "Run the program",
         "env": "Read the environment variable", "ffi": "Load native libraries",
         "sys": "Use the system interface", "llm": "Ask your model for completions",
         "tts": "Turn text into speech", "stt": "Transcribe speech"}
"""What each kind of permission lets a tool do, as the prompt says it."""


def _home() -> str | None:
    try:
        return str(Path.home())
    except (KeyError, RuntimeError):
        return None


def describe(entry: dict[str, Any]) -> tuple[str, str, str]:
    """``(what it may do, what on, a warning)`` for one requested permission; the
    warning is empty unless the grant is broad."""
    kind = str(entry.get("kind", ""))
    value = str(entry.get("value", "") or "")
    if kind == "memories":
        return ("Read and change your memories" if value == "write" else "Read your memories"), "", ""
    if kind in ("read", "write"):
        if value == "/":
            return VERBS[kind], "/", "the whole file system"
        if value and value == _home():
            return VERBS[kind], shown_path(value), "your whole home folder"
        return VERBS[kind], shown_path(value), ""
    if kind == "net":
        host, _, ports = value.partition(":")
        if host == "*":
            where = "any host" + (f", port {ports}" if ports else "")
            return VERBS[kind], where, "any host on the internet"
        return VERBS[kind], f"{host} port {ports}" if ports else host, ""
    return VERBS.get(kind, kind), value, ""


class PermissionScreen(ModalScreen[str]):
    """Ask whether ``request.tool`` may have ``request.permissions``.

    Dismisses with ``once``, ``session``, ``always`` or ``deny``.

    | Key | Decision |
    | --- | --- |
    | o | Allow this call once |
    | s | Allow for this session |
    | a | Allow always |
    | d, escape | Deny |
    | tab, enter | Move between the buttons, press one |
    """

    CSS_PATH = "permission.tcss"
    AUTO_FOCUS = "#deny"
    BINDINGS = [
        Binding("o", "decide('once')", "Once"),
        Binding("s", "decide('session')", "Session"),
        Binding("a", "decide('always')", "Always"),
        Binding("d", "decide('deny')", "Deny"),
        Binding("escape", "decide('deny')", "Deny", show=False),
    ]

    def __init__(self, request: PermissionRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        count = len(self.request.permissions)
        with Vertical(id="permission-dialog") as dialog:
            dialog.border_title = "Permission needed"
            yield Static(Content.assemble((self.request.tool, "bold $text-primary"),
                                          " asks for " + ("this:" if count == 1 else f"these {count}:")),
                         id="permission-tool")
            with VerticalScroll(id="permission-list", can_focus=False):
                for entry in self.request.permissions:
                    yield from self._entry(entry)
            with Horizontal(id="permission-buttons"):
                yield Button(Content.from_markup("Allow [u]o[/u]nce"), id="once", variant="primary")
                yield Button(Content.from_markup("This [u]s[/u]ession"), id="session")
                yield Button(Content.from_markup("[u]A[/u]lways"), id="always")
                yield Button(Content.from_markup("[u]D[/u]eny"), id="deny", variant="error")

    @staticmethod
    def _entry(entry: dict[str, Any]) -> ComposeResult:
        verb, target, warning = describe(entry)
        line = Content.assemble(("• ", "$text-warning"), (verb, "bold"))
        if target:
            line = Content.assemble(line, " ", (target, "$text-accent" if warning else ""))
        if entry.get("optional"):
            line = Content.assemble(line, ("  (optional)", "$text-muted italic"))
        yield Static(line, classes="permission--entry")
        if warning:
            yield Static(Content.styled(f"⚠ {warning}", "$text-warning"), classes="permission--warning")
        reason = str(entry.get("reason") or "").strip()
        yield Static(Content(reason) if reason else Content.styled("(no reason given)", "$text-muted"),
                     classes="permission--reason")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id in DECISIONS:
            event.stop()
            self.dismiss(event.button.id)

    def action_decide(self, decision: str) -> None:
        """Close the prompt with ``decision``."""
        self.dismiss(decision)
