"""Text from outside that tries to drive the terminal through the TUI — and is shown inert.

A model's reply, a tool's name, arguments, result, logs and bubbles, a permission's
reason, a form's question, a notification, an extension's manifest and an MCP server's
entry each carry the sequences an attacker uses: set the window title (OSC 0), write
the clipboard (OSC 52), clear the screen and home the cursor (CSI), a DCS string, a C1
CSI, a bidi override. What the app would write to the terminal is rendered from the
screen as Textual writes it, and none of those sequences may be in it, while the words
around them are.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from shell_helpers import open_screen, settle
from visible import terminal_update, until_screen

from workbench.events import (AskUserRequest, DisplayBubble, Notice, NotificationPosted,
                              PermissionRequest, ToolCallEnded, ToolCallLog, ToolCallStarted)
from workbench.tui.screens.ask_user import AskUserScreen
from workbench.tui.screens.drawer import NotificationDrawer
from workbench.tui.screens.extensions import ExtensionsScreen
from workbench.tui.screens.permission import PermissionScreen

pytestmark = pytest.mark.security

SIZE = (100, 40)

ATTACKS = {
    "title": "\x1b]0;pwned-title\x07",
    "clipboard": "\x1b]52;c;cm0gLXJmIH4=\x07",
    "clear": "\x1b[2J\x1b[H",
    "dcs": "\x1bPq#0;2;0;0;0\x1b\\",
    "c1": "\x9b31m",
    "bidi": "\u202e",
}
FORBIDDEN = ["\x1b]0;", "\x1b]52;", "\x1b[2J", "\x1b[H", "\x1bP", "\x9b", "\u202e", "\x07"]


def evil(words: str) -> str:
    """``words`` with every attack in it; ``words`` itself stays readable."""
    return f"{words} " + "".join(ATTACKS.values()) + " ALL TESTS PASSED"


def terminal_output(app) -> str:
    """What Textual would write to a terminal to draw the screen now."""
    update = terminal_update(app)
    console = Console(file=io.StringIO(), force_terminal=True, color_system="truecolor",
                      width=SIZE[0], height=SIZE[1])
    return update.render_segments(console)


def assert_inert(app, *words: str) -> None:
    output = terminal_output(app)
    for sequence in FORBIDDEN:
        assert sequence not in output, f"{sequence!r} reached the terminal"
    for word in words:
        assert word in output, f"{word!r} is not shown"


async def test_a_model_reply_and_a_tool_card(make_app, until) -> None:
    app = make_app([{"text": evil("Reply-words")}])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hi", "enter")
        await until(pilot, lambda: "Reply-words" in terminal_output(app))
        app.host.bus.publish(ToolCallStarted(call_id="c9", tool=evil("Tool-name"),
                                             arguments={"path": evil("Arg-words")}, caller="model"))
        app.host.bus.publish(ToolCallLog(call_id="c9", level="info", message=evil("Log-words")))
        app.host.bus.publish(ToolCallEnded(call_id="c9", tool=evil("Tool-name"), ok=False,
                                           error={"kind": "tool", "message": evil("Error-words")}))
        await until(pilot, lambda: "Error-words" in terminal_output(app))
        assert_inert(app, "Reply-words", "Tool-name", "Error-words", "pwned-title")


@pytest.mark.parametrize(("display", "payload", "words"), [
    ("markdown", {"text": evil("Markdown-words")}, "Markdown-words"),
    ("table", {"columns": [evil("Column")], "rows": [[evil("Cell-words")]]}, "Cell-words"),
    ("diff", {"before": "a\n", "after": evil("Diff-words") + "\n", "title": evil("Diff-title")},
     "Diff-words"),
    ("image", {"dataB64": "bm90IGFuIGltYWdl", "mime": "image/png", "alt": evil("Alt-words")},
     "Alt-words"),
])
async def test_display_bubbles(make_app, until, display, payload, words) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        app.host.bus.publish(DisplayBubble(call_id="c1", display=display, payload=payload))
        await until(pilot, lambda: words in terminal_output(app))
        assert_inert(app, words)


async def test_a_permission_prompt(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        request = PermissionRequest(tool=evil("Tool-name"), permissions=[
            {"kind": "read", "value": evil("/some/path"), "reason": evil("Reason-words"),
             "optional": False, "key": "read:/x"}])
        answer = asyncio.ensure_future(app.responder.answer(request))
        await until_screen(pilot, PermissionScreen)
        await until(pilot, lambda: "Reason-words" in terminal_output(app))
        assert_inert(app, "Reason-words", "Tool-name")
        await pilot.press("escape")
        await until(pilot, answer.done)


async def test_an_ask_user_form(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        question = {"kind": "choice", "question": evil("Question-words"),
                    "options": [{"label": evil("Option-words"), "value": "a"}]}
        request = AskUserRequest(tool="demo.ask", call_id="c1", questions=[question])
        answer = asyncio.ensure_future(app.responder.answer(request))
        await until_screen(pilot, AskUserScreen)
        await until(pilot, lambda: "Option-words" in terminal_output(app))
        assert_inert(app, "Question-words", "Option-words")
        await pilot.press("escape")
        await until(pilot, answer.done)


async def test_notifications_in_the_drawer(make_app, until) -> None:
    app = make_app([])
    app.host.store.add_notification("error", evil("Title-words"), evil("Body-words"), source="tool")
    async with app.run_test(size=SIZE) as pilot:
        await open_screen(pilot, until, "ctrl+n", NotificationDrawer)
        await settle(pilot, until)
        await until(pilot, lambda: "Body-words" in terminal_output(app))
        assert_inert(app, "Title-words", "Body-words")
        # One that arrives while the drawer is open, as the supervisor posts it.
        title, body = evil("Live-words"), evil("Live-body")
        posted = app.host.store.add_notification("warning", title, body, source="tool")
        app.host.bus.publish(Notice(level="warning", message=f"{title} — {body}"))
        app.host.bus.publish(NotificationPosted(id=posted, level="warning", title=title, body=body,
                                                source="tool"))
        await until(pilot, lambda: "Live-words" in terminal_output(app))
        assert_inert(app, "Live-words")


def evil_extension(workdir: Path) -> Path:
    folder = workdir / "evilext"
    folder.mkdir()
    (folder / "main.py").write_text("def go(args, ctx):\n    return 1\n")
    (folder / "loca.json").write_text(json.dumps({
        "name": "evilext", "displayName": evil("Display-words"),
        "description": evil("Description-words"), "entry": "main.py",
        "tools": [{"name": "go", "description": evil("Tool-words"), "function": "go",
                   "parameters": {"type": "object"},
                   "permissions": {"read": [{"path": "/tmp", "reason": evil("Reason-words")}]}}]}))
    return folder


async def test_an_extensions_manifest_on_the_install_review(make_app, until, workdir: Path) -> None:
    from workbench.tui.screens.review import ReviewScreen
    from workbench.tui.screens.source_prompt import SourcePromptScreen

    folder = evil_extension(workdir)
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await open_screen(pilot, until, "ctrl+e", ExtensionsScreen)
        await pilot.press("i")
        await until_screen(pilot, SourcePromptScreen)
        await pilot.press(*str(folder), "enter")
        await until_screen(pilot, ReviewScreen)
        await until(pilot, lambda: "Reason-words" in terminal_output(app))
        assert_inert(app, "Reason-words")


async def test_an_extensions_manifest_on_the_extensions_screen(make_app, until, workdir: Path) -> None:
    folder = evil_extension(workdir)
    app = make_app([])
    app.host.extensions.install(str(folder), approve=lambda plan: True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_screen(pilot, until, "ctrl+e", ExtensionsScreen)
        await settle(pilot, until)
        names = [extension.name for extension in screen.extension_list.extensions]
        screen.extension_list.highlighted = names.index("evilext")
        await until(pilot, lambda: "Description-words" in terminal_output(app))
        assert_inert(app, "Description-words")


async def test_an_mcp_servers_entry_on_the_mcp_screen(make_app, until, home) -> None:
    from workbench.mcp.config import ServerConfig, write_server
    from workbench.tui.screens.mcp import McpScreen

    write_server(home.config_file, ServerConfig(name="evil", command="/nonexistent/" + evil("Command-words"),
                                                args=(evil("Arg-words"),)))
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_screen(pilot, until, "f3", McpScreen)
        await until(pilot, lambda: len(screen.servers) == 1, timeout=30)
        await settle(pilot, until)
        await until(pilot, lambda: "Command-words" in terminal_output(app))
        assert_inert(app, "Command-words")
