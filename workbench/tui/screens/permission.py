"""The permission prompt: a tool needs something it was not granted.

It names the tool and each permission it asks for, in words, with the author's
reason; broad ones (the whole file system, the home folder, any network host) stand
out. Optional entries come with the required ones the first time they are
undecided, each with a checkbox, so the person can leave them out. The same prompt
comes for a tool's permissions before it starts and for a capability (memories, the
model, speech) it reaches for while running. The person answers with a key or a
button: once, for the session, always, or deny. The screen dismisses with a
``PermissionAnswer`` (the decision and the optional entries left out);
``TuiResponder`` turns Deny into a refusal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Static

from workbench import ctx_spec
from workbench.events import PermissionAnswer, PermissionRequest
from workbench.ctx_spec import net_text
from workbench.tui.paths import shown_path

DECISIONS = ("once", "session", "always", "deny")


def label(kind: str, value: str = "") -> str:
    """What a permission of ``kind`` naming ``value`` lets a tool do, as the prompt says
    it (``ctx_spec``'s label; an access level has its own)."""
    spec = ctx_spec.permission(kind)
    return spec.label_for(value) if spec is not None else kind


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
    spec = ctx_spec.permission(kind)
    if spec is not None and spec.access:  # the access level is what it says, not a value
        return label(kind, value), "", ""
    if kind in ("read", "write"):
        # A path that leads elsewhere through a link is granted where it leads: say so,
        # and judge its breadth by that.
        resolved = str(entry.get("resolved") or "")
        real = resolved or value
        shown = (f"this project ({shown_path(value)})" if entry.get("project")
                 else shown_path(value)) + (f" (leads to {shown_path(resolved)})" if resolved else "")
        if real == "/":
            return label(kind), shown, "the whole file system"
        if real and real == _home():
            return label(kind), shown, "your whole home folder"
        return label(kind), shown, ""
    if kind == "net":
        host, _, ports = value.partition(":")
        if host == "*":
            return label(kind), net_text(value), "any host on the internet"
        if ports == "*":
            return label(kind), net_text(value), "any port of the host"
        return label(kind), f"{host} port {ports}" if ports else host, ""
    return label(kind), value, ""


def entry_key(entry: dict[str, Any]) -> str:
    """The entry's ``key`` (``kind:value``), as the answer names what was declined."""
    kind, value = str(entry.get("kind", "")), str(entry.get("value") or "")
    return str(entry.get("key") or (f"{kind}:{value}" if value else kind))


class PermissionScreen(ModalScreen[PermissionAnswer]):
    """Ask whether ``request.tool`` may have ``request.permissions``.

    Dismisses with a ``PermissionAnswer``: ``once``, ``session``, ``always`` or
    ``deny``, and the keys of the optional entries whose box was unticked.

    Optional entries start ticked. The buttons then mean what they say (Allow grants
    what is listed) and the prompt asks only about entries the tool's author marked
    as useful and the person never decided, each with its reason in front of them;
    leaving one out is one key on its row. Unticked by default would make Allow grant
    less than it shows, and an all-optional prompt's Allow grant nothing. (Consent
    screens that start every scope unticked add a "Select all" for the same reason;
    here the rows are few and narrow, each is asked about only until decided, and the
    choice is kept with the answer's scope.)

    | Key | Decision |
    | --- | --- |
    | o | Allow this call once |
    | s | Allow for this session |
    | a | Allow always |
    | d, escape | Deny |
    | tab, shift+tab, right, left | Move between the optional boxes and the buttons |
    | space, enter | Tick or untick a box; press a button |
    """

    CSS_PATH = "permission.tcss"
    AUTO_FOCUS = "#deny"
    BINDINGS = [
        Binding("o", "decide('once')", "Once"),
        Binding("s", "decide('session')", "Session"),
        Binding("a", "decide('always')", "Always"),
        Binding("d", "decide('deny')", "Deny"),
        Binding("escape", "decide('deny')", "Deny", show=False),
        Binding("left", "app.focus_previous", "Previous", show=False),
        Binding("right", "app.focus_next", "Next", show=False),
    ]

    def __init__(self, request: PermissionRequest) -> None:
        super().__init__()
        self.request = request
        self._optional: dict[str, str] = {}
        """Each optional entry's checkbox id and the entry's key."""

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
            if self.request.covers:
                others = ", ".join(key.rpartition(".")[2] for key in self.request.covers)
                yield Static(Content.styled(
                    f"This session or Always also lets {others} do the same in this project.",
                    "$text-muted"), id="permission-covers")
            if self._optional:
                yield Static(Content.styled("Untick what it should do without (space).",
                                            "$text-muted"), id="permission-hint")
            with Horizontal(id="permission-buttons"):
                yield Button(Content.from_markup("Allow [u]o[/u]nce"), id="once", variant="primary")
                yield Button(Content.from_markup("This [u]s[/u]ession"), id="session")
                yield Button(Content.from_markup("[u]A[/u]lways"), id="always")
                yield Button(Content.from_markup("[u]D[/u]eny"), id="deny", variant="error")

    def _entry(self, entry: dict[str, Any]) -> ComposeResult:
        verb, target, warning = describe(entry)
        optional = bool(entry.get("optional"))
        line = Content(verb).stylize("bold")
        if target:
            # A box's label takes the focus colours: its target is not coloured too.
            accent = "$text-accent" if warning and not optional else ""
            line = Content.assemble(line, " ", (target, accent))
        if optional:
            box_id = f"optional-{len(self._optional)}"
            self._optional[box_id] = entry_key(entry)
            line = Content.assemble(line, ("  (optional)", "$text-muted italic"))
            yield Checkbox(line, value=True, compact=True, id=box_id,
                           classes="permission--entry permission--optional")
        else:
            yield Static(Content.assemble(("• ", "$text-warning"), line), classes="permission--entry")
        below = " -optional" if optional else ""
        if warning:
            yield Static(Content.styled(f"⚠ {warning}", "$text-warning"),
                         classes="permission--warning" + below)
        reason = str(entry.get("reason") or "").strip()
        yield Static(Content(reason) if reason else Content.styled("(no reason given)", "$text-muted"),
                     classes="permission--reason" + below)

    def declined(self) -> tuple[str, ...]:
        """The keys of the optional entries whose box is unticked."""
        return tuple(key for box_id, key in self._optional.items()
                     if not self.query_one(f"#{box_id}", Checkbox).value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id in DECISIONS:
            event.stop()
            self.action_decide(event.button.id)

    def action_decide(self, decision: str) -> None:
        """Close the prompt with ``decision`` and the optional entries left out."""
        self.dismiss(PermissionAnswer(decision, declined=self.declined()))  # type: ignore[arg-type]
