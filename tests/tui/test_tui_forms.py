"""Pilot tests of the ask-user form: every question kind, several questions in one
form, the keyboard and the mouse, cancelling, and the samples' tools receiving
what the person answered through a real host."""

from __future__ import annotations

import asyncio
import base64
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Button, Input, RadioSet, SelectionList

from visible import settled, until_screen, until_shown

from workbench.events import AskUserRequest, RequestDenied, ToolCallEnded
from workbench.tui.forms.action_question import ActionButtons, DiffQuestion, ImageQuestion
from workbench.tui.forms.pick_question import ChoiceQuestion, FilesQuestion
from workbench.tui.forms.table_question import TableQuestion
from workbench.tui.screens.ask_user import AskUserScreen
from workbench.tui.screens.permission import PermissionScreen
from workbench.tui.widgets.bubbles.diff_view import DiffView
from workbench.tui.widgets.bubbles.image_view import ImageView
from workbench.tui.widgets.tool_call_card import ToolCallCard

SIZE = (80, 24)

COLOR = {"question": "Pick a favorite color.",
         "options": [{"label": "Red", "value": "red"}, {"label": "Blue", "value": "blue"},
                     {"label": "Green", "value": "green", "description": "like grass"}]}
DIFF = {"kind": "diff", "question": "Apply this change?", "before": "a = 1\nb = 2\n",
        "after": "a = 1\nb = 3\n", "title": "settings.py"}
FILES = {"kind": "files", "question": "Which file?",
         "entries": [{"path": "/srv/notes/a.md", "label": "a.md", "description": "12 bytes"},
                     {"path": "/srv/notes/b.md"}, {"path": "/srv/notes/c.md", "label": "c.md"}]}
TABLE = {"kind": "table", "question": "Who takes each task?", "columns": ["task", "owner"],
         "rows": [["Water the plants", ""], ["Book the dentist", "Ana"]]}


def png(width: int, height: int, rgb: tuple[int, int, int]) -> str:
    """A plain RGB PNG of one color, base64-encoded."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = (b"\x00" + bytes(rgb) * width) * height
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")).decode()


IMAGE = {"kind": "image", "question": "Keep this colour?", "dataB64": png(8, 8, (0x33, 0x66, 0xCC)),
         "mime": "image/png", "actions": [{"label": "Keep it", "value": "keep"},
                                          {"label": "Try another", "value": "another"}]}


async def open_form(app, pilot, until, *questions: dict[str, Any]) -> tuple[asyncio.Future, AskUserScreen]:
    """Ask ``questions`` through the app's responder; wait until the form is up."""
    request = AskUserRequest(tool="demo.ask", call_id="c1", questions=list(questions))
    answer = asyncio.ensure_future(app.responder.answer(request))
    await until_screen(pilot, AskUserScreen)
    await images_drawn(pilot, until, app.screen)
    return answer, app.screen


async def images_drawn(pilot, until, screen) -> None:
    """Wait until every image on ``screen`` is decoded (or known not to be)."""
    views = list(screen.query(ImageView))
    await until(pilot, lambda: all(view.picture is not None or view.problem for view in views))
    await settled(pilot)  # the decoded pictures drawn


async def answered(pilot, until, answer: asyncio.Future) -> Any:
    await until(pilot, answer.done)
    return answer.result()


class TestChoice:
    async def test_one_choice_with_the_keyboard(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, form = await open_form(app, pilot, until, COLOR)
            assert isinstance(form.focused, RadioSet)
            await pilot.press("down", "enter")
            assert form.focused is form.query_one("#ask-send")
            await pilot.press("enter")
            assert await answered(pilot, until, answer) == ["blue"]
            assert app.screen is app.chat

    async def test_labels_and_descriptions_are_shown(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            _, form = await open_form(app, pilot, until, COLOR)
            question = form.query_one(ChoiceQuestion)
            assert question.query_one(".question--text").render().plain == "Pick a favorite color."
            labels = [str(button.label) for button in question.query("RadioButton")]
            assert labels == ["Red", "Blue", "Green  like grass"]

    async def test_several_ticked_choices(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, form = await open_form(app, pilot, until, dict(COLOR, multiselect=True))
            assert isinstance(form.focused, SelectionList)
            await pilot.press("space", "down", "down", "space", "ctrl+s")
            assert await answered(pilot, until, answer) == [["red", "green"]]

    async def test_nothing_ticked_is_an_empty_list(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, _ = await open_form(app, pilot, until, dict(COLOR, multiselect=True))
            await pilot.press("ctrl+s")
            assert await answered(pilot, until, answer) == [[]]

    async def test_typing_an_answer_picks_other(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, form = await open_form(app, pilot, until, dict(COLOR, allowFreeformInput=True))
            question = form.query_one(ChoiceQuestion)
            await pilot.press("enter")  # Red is picked first…
            await pilot.click(question.query_one(Input))
            await pilot.press(*"teal")  # …then the typed answer takes its place.
            radio = question.query_one(RadioSet)
            assert radio.pressed_index == 3
            assert str(radio.pressed_button.label).startswith("Other")
            await pilot.press("ctrl+s")
            assert await answered(pilot, until, answer) == ["teal"]

    async def test_picking_other_moves_to_the_text_box(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, form = await open_form(app, pilot, until, dict(COLOR, allowFreeformInput=True))
            await pilot.press("up", "enter")  # up from Red wraps round to Other
            question = form.query_one(ChoiceQuestion)
            assert question.query_one(RadioSet).pressed_index == 3
            assert form.focused is question.query_one(Input)
            await pilot.press(*"teal", "enter", "enter")
            assert await answered(pilot, until, answer) == ["teal"]

    async def test_typed_answer_with_ticked_choices(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            question = dict(COLOR, multiselect=True, allowFreeformInput=True)
            answer, _ = await open_form(app, pilot, until, question)
            await pilot.press("down", "space", "tab", *"teal", "ctrl+s")
            assert await answered(pilot, until, answer) == [["blue", "teal"]]

    async def test_a_question_without_options_takes_text(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, form = await open_form(app, pilot, until, {"question": "Your name?"})
            assert isinstance(form.focused, Input)
            await pilot.press(*"Ada", "enter")
            assert form.focused is form.query_one("#ask-send")
            await pilot.press("enter")
            assert await answered(pilot, until, answer) == ["Ada"]

    async def test_sending_without_a_pick_points_at_the_question(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, form = await open_form(app, pilot, until, {"question": "Your name?"}, COLOR)
            await pilot.press(*"Ada", "ctrl+s")
            await until_shown(pilot, lambda: not answer.done())
            assert app.screen is form
            assert form.problem == "Question 2 has no answer yet: pick one."
            shown = form.query_one("#ask-problem")
            assert shown.display and "Question 2" in shown.render().plain
            second = form.query(ChoiceQuestion)[1]
            assert second.has_class("-unanswered")
            assert form.focused is second.query_one(RadioSet)
            await pilot.press("enter", "ctrl+s")
            assert await answered(pilot, until, answer) == ["Ada", "red"]

    async def test_an_optional_question_may_be_left_empty(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            optional = {"question": "Your website? (optional)", "allowFreeformInput": True,
                        "optional": True}
            colour = {**COLOR, "optional": True}
            answer, form = await open_form(app, pilot, until, {"question": "Your name?"},
                                           optional, colour)
            await pilot.press("ctrl+s")  # the name is not optional
            await until_shown(pilot, lambda: form.problem == "Question 1 has no answer yet: type an answer.")
            await pilot.press(*"Ada", "ctrl+s")
            assert await answered(pilot, until, answer) == ["Ada", None, None]

    async def test_mouse_picks_and_sends(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, form = await open_form(app, pilot, until, COLOR)
            buttons = list(form.query("RadioButton"))
            await pilot.click(buttons[2])
            await pilot.click("#ask-send")
            assert await answered(pilot, until, answer) == ["green"]


class TestCancel:
    async def test_escape_refuses_the_form(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, _ = await open_form(app, pilot, until, COLOR, TABLE)
            await pilot.press("escape")
            await until(pilot, answer.done)
            with pytest.raises(RequestDenied, match="closed the form without answering"):
                answer.result()
            assert app.screen is app.chat

    async def test_escape_from_a_text_box_refuses_the_form(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, form = await open_form(app, pilot, until, TABLE)
            assert isinstance(form.focused, Input)
            await pilot.press(*"x", "escape")
            await until(pilot, answer.done)
            with pytest.raises(RequestDenied):
                answer.result()

    async def test_cancel_button(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, _ = await open_form(app, pilot, until, COLOR)
            await pilot.click("#ask-cancel")
            await until(pilot, answer.done)
            with pytest.raises(RequestDenied):
                answer.result()


class TestDiff:
    async def test_the_change_and_accept(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, form = await open_form(app, pilot, until, DIFF)
            view = form.query_one(DiffView)
            lines = [line.plain for line in view.lines(60)]
            assert any(line.rstrip().endswith("-b = 2") for line in lines)
            assert any(line.rstrip().endswith("+b = 3") for line in lines)
            labels = [str(button.label) for button in form.query_one(ActionButtons).query(Button)]
            assert labels == ["Accept", "Reject"]
            await pilot.press("tab", "enter")  # from the change to Accept
            assert str(form.query_one(ActionButtons).query(Button).first().label) == "✓ Accept"
            assert form.focused is form.query_one("#ask-send")
            await pilot.press("enter")
            assert await answered(pilot, until, answer) == ["accept"]

    async def test_reject_with_the_mouse(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, form = await open_form(app, pilot, until, DIFF)
            await pilot.click(form.query_one(ActionButtons).query(Button)[1])
            await pilot.click("#ask-send")
            assert await answered(pilot, until, answer) == ["reject"]

    async def test_v_shows_the_change_side_by_side(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            _, form = await open_form(app, pilot, until, DIFF)
            view = form.query_one(DiffView)
            assert not view.split
            await pilot.press("v")
            assert view.split
            row = next(line.plain for line in view.lines(70) if "b = 2" in line.plain)
            left, _, right = row.partition("│")
            assert "-b = 2" in left and "+b = 3" in right
            await pilot.press("v")
            assert not view.split

    async def test_sending_unanswered_refuses(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, form = await open_form(app, pilot, until, DIFF)
            await pilot.press("ctrl+s")
            await until_shown(pilot, lambda: not answer.done())
            assert form.problem == "The question has no answer yet: press one of the buttons."


class TestFiles:
    async def test_pick_one_file(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, form = await open_form(app, pilot, until, FILES)
            labels = [str(button.label) for button in form.query_one(FilesQuestion).query("RadioButton")]
            assert labels == ["a.md  12 bytes  /srv/notes/a.md", "/srv/notes/b.md", "c.md  /srv/notes/c.md"]
            await pilot.press("down", "down", "enter", "enter")
            assert await answered(pilot, until, answer) == ["/srv/notes/c.md"]

    async def test_pick_several_files(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, _ = await open_form(app, pilot, until, dict(FILES, multiselect=True))
            await pilot.press("space", "down", "space", "ctrl+s")
            assert await answered(pilot, until, answer) == [["/srv/notes/a.md", "/srv/notes/b.md"]]


class TestImage:
    async def test_image_and_the_tools_buttons(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, form = await open_form(app, pilot, until, IMAGE)
            view = form.query_one(ImageView)
            assert view.natural_size == (8, 8)
            assert view.size == (8, 4)
            strip = view.render_line(0)
            assert strip.text == "▀" * 8
            assert {segment.style.color.triplet.hex for segment in strip} == {"#3366cc"}
            labels = [str(button.label) for button in form.query_one(ActionButtons).query(Button)]
            assert labels == ["Keep it", "Try another"]
            assert form.focused is form.query_one(ActionButtons).query(Button).first()
            await pilot.press("tab", "enter")
            assert form.focused is form.query_one("#ask-send")
            await pilot.press("enter")
            assert await answered(pilot, until, answer) == ["another"]

    async def test_labels_are_text_not_markup(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            actions = [{"label": "[bold]Keep[/bold]", "value": 1}, {"label": "Drop [it]", "value": 2}]
            answer, form = await open_form(app, pilot, until, dict(IMAGE, actions=actions))
            labels = [str(button.label) for button in form.query_one(ActionButtons).query(Button)]
            assert labels == ["[bold]Keep[/bold]", "Drop [it]"]
            await pilot.press("enter", "enter")
            assert await answered(pilot, until, answer) == [1]

    async def test_an_image_that_cannot_be_drawn_says_so(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            broken = dict(IMAGE, dataB64=base64.b64encode(b"\x89PNG\r\n\x1a\nnot really").decode())
            answer, form = await open_form(app, pilot, until, broken)
            view = form.query_one(ImageView)
            assert view.problem
            assert view.render_line(0).text.startswith("(image not shown: ")
            await pilot.click(form.query_one(ActionButtons).query(Button).first())
            await pilot.press("enter")
            assert await answered(pilot, until, answer) == ["keep"]


class TestTable:
    async def test_edit_a_cell(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, form = await open_form(app, pilot, until, TABLE)
            question = form.query_one(TableQuestion)
            assert [row.values for row in question.table_rows] == [["Water the plants", ""],
                                                                   ["Book the dentist", "Ana"]]
            # Tab walks the cells: task, owner (then the row's remove button).
            await pilot.press("tab", *"Bo", "ctrl+s")
            assert await answered(pilot, until, answer) == [[
                {"task": "Water the plants", "owner": "Bo"},
                {"task": "Book the dentist", "owner": "Ana"}]]

    async def test_click_a_cell_and_enter_moves_on(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, form = await open_form(app, pilot, until, TABLE)
            second = form.query_one(TableQuestion).table_rows[1]
            cells = list(second.query(Input))
            await pilot.click(cells[1])
            assert form.focused is cells[1]
            await pilot.press("end", *" and Bo", "enter")
            assert form.focused is not cells[1]
            await pilot.press("ctrl+s")
            rows = await answered(pilot, until, answer)
            assert rows[0][1] == {"task": "Book the dentist", "owner": "Ana and Bo"}

    async def test_add_and_remove_rows_with_keys(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, form = await open_form(app, pilot, until, TABLE)
            question = form.query_one(TableQuestion)
            await pilot.press("ctrl+n")  # after the first row
            await until_shown(pilot, lambda: len(question.table_rows) == 3)
            assert form.focused is question.table_rows[1].query(Input).first()
            await pilot.press(*"Pay rent", "tab", *"Cy")
            await pilot.click(question.table_rows[0].query(Input).first())
            await pilot.press("ctrl+r")
            await until_shown(pilot, lambda: len(question.table_rows) == 2)
            await pilot.press("ctrl+s")
            assert await answered(pilot, until, answer) == [[
                {"task": "Pay rent", "owner": "Cy"}, {"task": "Book the dentist", "owner": "Ana"}]]

    async def test_add_and_remove_rows_with_the_mouse(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, form = await open_form(app, pilot, until, TABLE)
            question = form.query_one(TableQuestion)
            await pilot.click(question.table_rows[1].query_one(".table-row--remove"))
            await until_shown(pilot, lambda: len(question.table_rows) == 1)
            await pilot.click(question.query_one(".table-question--add"))
            await until_shown(pilot, lambda: len(question.table_rows) == 2)
            assert form.focused is question.table_rows[1].query(Input).first()
            await pilot.press(*"Feed the cat")
            await pilot.click("#ask-send")
            assert await answered(pilot, until, answer) == [[
                {"task": "Water the plants", "owner": ""}, {"task": "Feed the cat", "owner": ""}]]

    async def test_all_rows_removed_is_an_empty_table(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, form = await open_form(app, pilot, until, TABLE)
            question = form.query_one(TableQuestion)
            await pilot.press("ctrl+r")
            await until_shown(pilot, lambda: len(question.table_rows) == 1)
            await pilot.press("ctrl+r")
            await until_shown(pilot, lambda: question.table_rows == [])
            assert form.focused is question.query_one(".table-question--add")
            await pilot.press("ctrl+s")
            assert await answered(pilot, until, answer) == [[]]


class TestSeveralQuestions:
    async def test_one_form_answers_in_order(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            answer, form = await open_form(app, pilot, until, COLOR, DIFF, FILES, IMAGE, TABLE)
            kinds = [type(question) for question in form.question_widgets]
            assert kinds == [ChoiceQuestion, DiffQuestion, FilesQuestion, ImageQuestion, TableQuestion]
            assert form.query_one("#ask-dialog").border_subtitle == "5 questions"
            texts = [q.query_one(".question--text").render().plain for q in form.question_widgets]
            assert texts[0] == "1. Pick a favorite color." and texts[4] == "5. Who takes each task?"
            await pilot.press("down", "enter")            # 1: Blue; on to the change
            await pilot.press("tab", "tab", "enter")       # 2: Reject; on to the files
            assert isinstance(form.focused, RadioSet)
            await pilot.press("enter")                     # 3: a.md; on to the image
            await pilot.press("enter")                     # 4: Keep it; on to the table
            assert isinstance(form.focused, Input)
            await pilot.press("tab", *"Bo", "ctrl+s")      # 5: an owner, and send
            assert await answered(pilot, until, answer) == [
                "blue", "reject", "/srv/notes/a.md", "keep",
                [{"task": "Water the plants", "owner": "Bo"},
                 {"task": "Book the dentist", "owner": "Ana"}]]
            assert app.screen is app.chat

    async def test_the_form_scrolls_to_a_question_below(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            _, form = await open_form(app, pilot, until, COLOR, DIFF, FILES, IMAGE, TABLE)
            scroll = form.query_one("#ask-questions")
            assert scroll.max_scroll_y > 0
            assert form.query_one("#ask-dialog").region.bottom <= SIZE[1]
            table = form.query_one(TableQuestion)
            for _ in range(12):
                if form.focused in table.query(Input):
                    break
                await pilot.press("tab")
            assert form.focused is table.query(Input).first()

            def cell_in_view() -> bool:
                """the focused cell inside the form's visible part"""
                cell = form.focused.region
                return cell.height == 1 and scroll.region.y <= cell.y < scroll.region.bottom

            await until(pilot, cell_in_view)  # the form scrolls (animated) to the cell
            assert scroll.scroll_y > 5


# --- the samples' tools, through a real host ---------------------------------------


def enable_samples(workdir: Path) -> None:
    home = workdir.parent / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[extensions]\nsamples = true\n")


async def start_tool(app, pilot, until, prompt: str = "go") -> list:
    """Wait for the extensions, send ``prompt``; returns the list the host's events go to."""
    await until(pilot, lambda: app.host.loading.loaded_at > 0)
    seen: list = []
    app.host.bus.subscribe(seen.append)
    await pilot.press(*prompt, "enter")
    return seen


def ended(seen: list) -> ToolCallEnded:
    [event] = [e for e in seen if isinstance(e, ToolCallEnded)]
    return event


class TestSampleTools:
    """Each sample tool asks through the TUI and gets back exactly what was answered."""

    async def test_sample_choice(self, make_app, until, workdir: Path) -> None:
        enable_samples(workdir)
        app = make_app([{"tool_calls": [{"name": "sample_choice", "arguments": {}}]}, {"text": "ok"}])
        async with app.run_test(size=SIZE) as pilot:
            seen = await start_tool(app, pilot, until)
            await until_screen(pilot, AskUserScreen)
            assert app.screen.tool == "samples.sample_choice"
            await pilot.press("down", "down", "enter", "enter")
            await until(pilot, lambda: not app.chat.busy)
            result = ended(seen)
            assert result.ok and result.result == {"question": "Pick a favorite color.", "answer": "green"}

    async def test_sample_diff(self, make_app, until, workdir: Path) -> None:
        enable_samples(workdir)
        app = make_app([{"tool_calls": [{"name": "sample_diff", "arguments": {"text": "one  \n\n\n\ntwo\n"}}]},
                        {"text": "ok"}])
        async with app.run_test(size=SIZE) as pilot:
            seen = await start_tool(app, pilot, until)
            view = await until(pilot, lambda: isinstance(app.screen, AskUserScreen)
                               and app.screen.query_one(DiffView))
            assert "one··" in "".join(line.plain for line in view.lines(70))
            await pilot.press("tab", "enter", "enter")
            await until(pilot, lambda: not app.chat.busy)
            assert ended(seen).result == {"changed": True, "accepted": True, "text": "one\n\ntwo\n"}

    async def test_sample_files(self, make_app, until, workdir: Path) -> None:
        enable_samples(workdir)
        app = make_app([{"tool_calls": [{"name": "sample_files", "arguments": {}}]}, {"text": "ok"}])
        async with app.run_test(size=SIZE) as pilot:
            seen = await start_tool(app, pilot, until)
            await until_screen(pilot, PermissionScreen)
            await pilot.press("o")
            question = await until(pilot, lambda: isinstance(app.screen, AskUserScreen)
                                   and app.screen.query_one(FilesQuestion))
            first = question.entries[0]
            await pilot.press("enter", "enter")
            await until(pilot, lambda: not app.chat.busy)
            result = ended(seen)
            assert result.ok, result.error
            assert result.result["file"] == first.label.plain.split("  ")[0]
            assert Path(first.value).is_file()

    async def test_sample_image(self, make_app, until, workdir: Path) -> None:
        enable_samples(workdir)
        app = make_app([{"tool_calls": [{"name": "sample_image", "arguments": {"color": "#22aa44"}}]},
                        {"text": "ok"}])
        async with app.run_test(size=SIZE) as pilot:
            seen = await start_tool(app, pilot, until)
            await until_screen(pilot, AskUserScreen)
            await images_drawn(pilot, until, app.screen)
            view = app.screen.query_one(ImageView)
            assert {segment.style.color.triplet.hex for segment in view.render_line(0)} == {"#22aa44"}
            await pilot.press("tab", "enter", "enter")
            await until(pilot, lambda: not app.chat.busy)
            assert ended(seen).result == {"color": "#22aa44", "action": "another"}

    async def test_sample_table(self, make_app, until, workdir: Path) -> None:
        enable_samples(workdir)
        app = make_app([{"tool_calls": [{"name": "sample_table", "arguments": {"tasks": ["Cook", "Shop"]}}]},
                        {"text": "ok"}])
        async with app.run_test(size=SIZE) as pilot:
            seen = await start_tool(app, pilot, until)
            await until_screen(pilot, AskUserScreen)
            await pilot.press("tab", *"Ana", "ctrl+n", *"Clean", "ctrl+s")
            await until(pilot, lambda: not app.chat.busy)
            assert ended(seen).result == {
                "rows": [{"task": "Cook", "owner": "Ana"}, {"task": "Clean", "owner": ""},
                         {"task": "Shop", "owner": ""}],
                "unassigned": ["Clean", "Shop"]}

    async def test_escape_cancels_the_tools_form(self, make_app, until, workdir: Path) -> None:
        enable_samples(workdir)
        app = make_app([{"tool_calls": [{"name": "sample_choice", "arguments": {}}]}, {"text": "ok"}])
        async with app.run_test(size=SIZE) as pilot:
            seen = await start_tool(app, pilot, until)
            await until_screen(pilot, AskUserScreen)
            await pilot.press("escape")
            await until(pilot, lambda: not app.chat.busy)
            result = ended(seen)
            assert not result.ok
            assert result.error["kind"] == "cancelled"
            assert "closed the form without answering" in result.error["message"]
            card = app.chat.query_one(ToolCallCard)
            assert card.outcome.startswith("✗ the form was not answered")
