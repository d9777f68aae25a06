"""Pilot tests of the first frame: the prompt box is there before the host is open, and
nothing typed into it meanwhile is lost.

The host opens behind a gate the test holds (the app's ``open_host`` seam), so that what
is typed surely lands before it is open; then it is the real host on a scripted model.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from workbench.core.host import Host
from workbench.errors import WorkbenchError
from workbench.tui.app import WorkbenchApp, open_later
from workbench.tui.responder import TuiResponder
from workbench.tui.screens.chat import ChatScreen
from workbench.tui.screens.sessions import SessionsScreen
from workbench.tui.screens.starting import StartingScreen
from workbench.tui.widgets.message_view import MessageView

SIZE = (80, 24)


class Gate:
    """Opens the host (on ``scripted:replies.json``) once ``release`` is called."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.host: Host | None = None

    def __call__(self, responder: TuiResponder) -> Host:
        if not self.released.wait(60):
            raise TimeoutError("the test never let the host open")
        self.host = Host.open(model="scripted:replies.json", responder=responder,
                              defer_extensions=True)
        return self.host

    def release(self) -> None:
        self.released.set()


@pytest.fixture
def gated(workdir: Path) -> Iterator[Callable[[list[dict]], tuple[WorkbenchApp, Gate]]]:
    """Apps whose host opens when the test says; the hosts are closed when it ends."""
    gates: list[Gate] = []

    def make(replies: list[dict]) -> tuple[WorkbenchApp, Gate]:
        (workdir / "replies.json").write_text(json.dumps(replies), encoding="utf-8")
        gate = Gate()
        gates.append(gate)
        return WorkbenchApp(None, open_host=gate), gate

    yield make
    for gate in gates:
        gate.release()
        if gate.host is not None:
            gate.host.close()


def texts(app: WorkbenchApp) -> list[tuple[str, str]]:
    chat = getattr(app, "chat", None)
    return [(view.role, view.text) for view in chat.query(MessageView)] if chat else []


class TestBeforeTheHostIsOpen:
    async def test_the_prompt_box_takes_keys_before_the_host_is_open(self, gated, until) -> None:
        """Typed before the host is open: the text moves to the chat's box, as typed."""
        app, gate = gated([{"text": "unused"}])
        async with app.run_test(size=SIZE) as pilot:
            starting = await until(pilot, lambda: isinstance(app.screen, StartingScreen)
                                   and app.screen)
            await pilot.press(*"half a tho", "left", "left")
            assert starting.prompt_input.text == "half a tho"
            assert gate.host is None
            gate.release()
            chat = await until(pilot, lambda: isinstance(app.screen, ChatScreen)
                               and app.screen.prompt_input.text and app.screen)
            assert chat.prompt_input.text == "half a tho"
            assert chat.prompt_input.cursor_location == (0, 8)
            await pilot.press(*"ugh")
            assert chat.prompt_input.text == "half a tughho"

    async def test_messages_sent_before_the_host_is_open_are_sent_in_order(
            self, gated, until) -> None:
        """Sent with Enter before the host is open: shown as waiting, then sent one after
        the other once the chat is there, each with its reply."""
        app, gate = gated([{"text": "first reply"}, {"text": "second reply"}])
        async with app.run_test(size=SIZE) as pilot:
            starting = await until(pilot, lambda: isinstance(app.screen, StartingScreen)
                                   and app.screen)
            await pilot.press(*"one", "enter", *"two", "enter", *"three")
            await until(pilot, lambda: len(starting.query("#starting-sent Static")) == 2)
            assert starting.sent == ["one", "two"]
            gate.release()
            await until(pilot, lambda: texts(app) == [
                ("user", "one"), ("assistant", "first reply"),
                ("user", "two"), ("assistant", "second reply")])
            assert app.chat.prompt_input.text == "three"
            await until(pilot, lambda: not app.chat.busy)
            stored = [(m["role"], m["content"])
                      for m in app.host.chats.messages(app.chat.session_id)]
            assert stored == [("user", "one"), ("assistant", "first reply"),
                              ("user", "two"), ("assistant", "second reply")]

    async def test_a_screen_asked_for_before_the_host_is_open_opens_once_it_is(
            self, gated, until) -> None:
        """Ctrl+O before the host is open lists the chats once it is."""
        app, gate = gated([{"text": "unused"}])
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, StartingScreen))
            await pilot.press("ctrl+o")
            gate.release()
            await until(pilot, lambda: isinstance(app.screen, SessionsScreen))


async def test_a_host_that_cannot_open_ends_the_app_and_says_why(workdir: Path, until) -> None:
    """A model file that is not there: the app exits, and the error is kept for the CLI."""
    app = open_later(model="scripted:missing.json")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.return_code == 1)
    assert app.wait_opened() is None
    with pytest.raises(WorkbenchError, match="missing.json"):
        app.raise_opening_error()
