"""The review of what installing, updating or trusting an extension would approve.

The person reads the plan (tools, each permission with its reason, hooks, knowledge,
skills; for an update or a trust, what changed) and accepts or declines with a key.
The screen dismisses with True to go ahead.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label

from workbench.core.extension_views import InstallPlan
from workbench.tui.widgets.plan_view import VERBS, PlanView

QUESTIONS = {"install": "Install it?", "update": "Update to this version?",
             "trust": "Trust it as it is now?", "builtin": "Install it?"}


class ReviewScreen(ModalScreen[bool]):
    """Show ``plan`` and ask; dismisses with True (accept) or False (decline).

    | Key | Decision |
    | --- | --- |
    | a | Accept |
    | d, escape | Decline |
    | up, down, page up, page down | Scroll the plan |
    """

    CSS_PATH = "review.tcss"
    AUTO_FOCUS = "#review-plan"
    BINDINGS = [
        Binding("a", "decide(True)", "Accept"),
        Binding("d", "decide(False)", "Decline"),
        Binding("escape", "decide(False)", "Decline", show=False),
    ]

    def __init__(self, plan: InstallPlan) -> None:
        super().__init__()
        self.plan = plan

    def compose(self) -> ComposeResult:
        with Vertical(id="review-dialog") as dialog:
            dialog.border_title = f"Review: {VERBS[self.plan.action].lower()} {self.plan.name}"
            yield PlanView(self.plan, id="review-plan")
            with Horizontal(id="review-buttons"):
                yield Label(QUESTIONS[self.plan.action], id="review-question")
                yield Button("[u]A[/u]ccept", id="accept", variant="primary")
                yield Button("[u]D[/u]ecline", id="decline", variant="error")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "accept")

    def action_decide(self, accept: bool) -> None:
        """Close the review: True goes ahead."""
        self.dismiss(accept)
