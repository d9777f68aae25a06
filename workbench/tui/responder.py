"""Answer the core's requests with modal screens.

``TuiResponder`` implements the core's ``Responder`` protocol: it pushes a modal on
the running app and awaits a future the modal's dismissal resolves. The core never
sees a Textual type; it gets a ``PermissionAnswer``, a list of answers, a schedule
answer, or ``RequestDenied``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from textual.app import App
from textual.screen import Screen

from workbench.events import (AskUserRequest, NetworkRequest, PermissionRequest, Request,
                              RequestDenied, ScheduleProposalRequest)


class TuiResponder:
    """Answers requests by asking the person in the TUI.

    - Permission requests: Once, Session and Always grant what is ticked (the
      answer's ``declined`` names the optional entries unticked); Deny (or Escape)
      refuses with ``RequestDenied``, so the tool fails now and is asked about again
      next time, as in the headless front-end; when only optional entries were
      asked, it runs without them and they are not asked again this session.
    - Ask-user forms: every question in one form (``AskUserScreen``); closing it
      without sending refuses with ``RequestDenied``, which the tool sees as a
      cancelled form.
    - Network cards (a shell command's host beyond its chat's network, within the
      ceiling): Allow once, Allow for this chat, Deny (``NetworkScreen``).
    - Schedule proposals: the draft in a form to edit (``ScheduleScreen``); Save
      answers ``{"accepted": True, "draft": …}``, Cancel ``{"accepted": False}``.

    Args:
        app: The app that shows the modals; ``bind`` sets it when the responder is
            made before the app (the host is opened first).
    """

    interactive = True
    """A person is at the keyboard and sees each change as it is made, so file changes
    are not asked about first unless ``tools.review_writes`` is ``always``."""

    def __init__(self, app: App | None = None) -> None:
        self.app = app

    def bind(self, app: App) -> None:
        """Show this responder's modals on ``app``."""
        self.app = app

    async def answer(self, request: Request) -> Any:
        if isinstance(request, PermissionRequest):
            from workbench.tui.screens.permission import PermissionScreen

            answer = await self._show(PermissionScreen(request))
            if answer is None or answer.decision == "deny":
                raise RequestDenied("you chose Deny")
            return answer
        if isinstance(request, AskUserRequest):
            return await self._form(request)
        if isinstance(request, NetworkRequest):
            from workbench.tui.screens.network import NetworkScreen

            answer = await self._show(NetworkScreen(request))
            return answer if answer in ("once", "chat") else "deny"
        if isinstance(request, ScheduleProposalRequest):
            from workbench.tui.forms.schedule_screen import ScheduleScreen

            draft = await self._show(ScheduleScreen(request.draft, heading="Schedule a prompt?",
                                                    subtitle=f"proposed by {request.tool}"))
            return {"accepted": False} if draft is None else {"accepted": True, "draft": draft}
        raise RequestDenied(f"the TUI cannot answer a {request.kind} request yet")

    async def _form(self, request: AskUserRequest) -> list[Any]:
        from workbench.tui.screens.ask_user import AskUserScreen

        answers = await self._show(AskUserScreen(request.tool, list(request.questions)))
        if answers is None:
            raise RequestDenied("you closed the form without answering")
        return answers

    async def _show(self, screen: Screen) -> Any:
        """Push ``screen`` and wait until it is dismissed; returns its result."""
        app = self.app
        if app is None or not app.is_running:
            raise RequestDenied("the workbench window is not open")
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def resolve(result: Any) -> None:
            if not future.done():
                future.set_result(result)

        app.push_screen(screen, callback=resolve)
        try:
            return await future
        except asyncio.CancelledError:
            # The turn was cancelled while the modal was open: take the modal away.
            if screen.is_active:
                screen.dismiss(None)
            raise
