"""Pilot tests of the built-in file tools in a chat: one prompt for the project's read
tools ("this project (/path)"), an edit shown as a coloured diff bubble, and, where the
person asked for review, the diff question to accept, each through a real host."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button

from workbench.events import ToolCallEnded
from workbench.tui.screens.ask_user import AskUserScreen
from workbench.tui.screens.permission import PermissionScreen
from workbench.tui.widgets.bubbles.bubble import DiffBubble
from workbench.tui.widgets.bubbles.diff_view import DiffView

from visible import screen_text, until_screen, widget_lines

SIZE = (100, 30)
HOSTILE = "hello \x1b[31mred\x1b]0;owned\x07\n"


async def start(app, pilot, until, prompt: str = "go") -> list:
    await until(pilot, lambda: app.host.loading.loaded_at > 0)
    seen: list = []
    app.host.bus.subscribe(seen.append)
    await pilot.press(*prompt, "enter")
    return seen


def ended(seen: list) -> list[ToolCallEnded]:
    return [event for event in seen if isinstance(event, ToolCallEnded)]


def calls(*pairs) -> list[dict]:
    return [{"tool_calls": [{"name": name, "arguments": args}]} for name, args in pairs]


async def test_one_prompt_for_the_read_tools_of_this_project(make_app, until, workdir: Path) -> None:
    (workdir / "README.md").write_text("# app\n")
    app = make_app(calls(("read_file", {"path": "README.md"}), ("list_folder", {}),
                         ("find_files", {"pattern": "*.md"}), ("search_text", {"query": "app"}))
                   + [{"text": "Looked."}])
    async with app.run_test(size=SIZE) as pilot:
        seen = await start(app, pilot, until)
        await until_screen(pilot, PermissionScreen)
        where = f"this project ({workdir})".replace(str(Path.home()), "~")
        text = await until(pilot, lambda: where in screen_text(app) and screen_text(app))
        covers = " ".join(text.split())
        assert all(name in covers for name in ("list_folder", "find_files", "search_text"))
        await pilot.press("s")
        await until(pilot, lambda: len(ended(seen)) == 4)
        assert all(event.ok for event in ended(seen)), ended(seen)
        assert not isinstance(app.screen, PermissionScreen)


async def test_an_edit_is_a_coloured_diff_bubble_with_outside_text_made_safe(make_app, until,
                                                                            workdir: Path) -> None:
    (workdir / "notes.txt").write_text(HOSTILE)
    app = make_app(calls(("edit_file", {"path": "notes.txt", "old_text": "hello", "new_text": "bye"}))
                   + [{"text": "Edited."}])
    async with app.run_test(size=SIZE) as pilot:
        seen = await start(app, pilot, until)
        await until_screen(pilot, PermissionScreen)
        await pilot.press("s")
        await until(pilot, lambda: bool(app.chat.query(DiffBubble)))
        await until(pilot, lambda: ended(seen))
        assert ended(seen)[0].ok and not app.query(AskUserScreen)  # an interactive chat: no question
        bubble = app.chat.query_one(DiffBubble)
        # The bubble's view mounts after it, and draws once laid out: wait for what is seen.
        view = await until(pilot, lambda: bubble.query(DiffView) and bubble.query_one(DiffView))
        lines = await until(pilot, lambda: (drawn := widget_lines(view))
                            and any("-hello" in line for line in drawn) and drawn)
        assert any("+bye" in line for line in lines)
        assert not any("\x1b" in line or "\x07" in line for line in lines)
        assert any("$error" in str(span.style) or "error" in str(span.style)
                   for line in view.lines(80) for span in line.spans)
    assert (workdir / "notes.txt").read_text() == HOSTILE.replace("hello", "bye")


async def _review(make_app, until, workdir: Path, button: str) -> list:
    home = workdir.parent / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('[tools]\nreview_writes = "always"\n')
    (workdir / "app.py").write_text("x = 1\n")
    app = make_app(calls(("edit_file", {"path": "app.py", "old_text": "x = 1", "new_text": "x = 2"}))
                   + [{"text": "Asked."}])
    async with app.run_test(size=SIZE) as pilot:
        seen = await start(app, pilot, until)
        await until_screen(pilot, PermissionScreen)
        await pilot.press("s")
        await until_screen(pilot, AskUserScreen)
        text = await until(pilot, lambda: "+x = 2" in screen_text(app) and screen_text(app))
        assert "Write this change to app.py?" in text and "+x = 2" in text and "-x = 1" in text
        assert (workdir / "app.py").read_text() == "x = 1\n"  # nothing before the answer
        pressed = next(b for b in app.screen.query(Button) if str(b.label) == button)
        await pilot.click(pressed)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: ended(seen))
        return ended(seen)


async def test_a_reviewed_change_is_written_once_accepted(make_app, until, workdir: Path) -> None:
    [outcome] = await _review(make_app, until, workdir, "Accept")
    assert outcome.ok, outcome.error
    assert (workdir / "app.py").read_text() == "x = 2\n"


async def test_a_rejected_change_is_not_written(make_app, until, workdir: Path) -> None:
    [outcome] = await _review(make_app, until, workdir, "Reject")
    assert not outcome.ok and "rejected" in outcome.error["message"]
    assert (workdir / "app.py").read_text() == "x = 1\n"
