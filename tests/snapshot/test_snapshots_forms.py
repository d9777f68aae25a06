"""How the forms, the permission prompt, the schedule review and the display bubbles
look at 80×24, in the dark and the light theme.

Accept intended changes with
``pytest tests/snapshot/test_snapshots_forms.py --snapshot-update`` (the whole file).
"""

from __future__ import annotations

import asyncio
import base64
import struct
import zlib
from pathlib import Path

import pytest
from app_factory import SMALL, no_cursor_blink, wait_until
from textual.widgets import Input, TextArea
from visible import settled, until_shown

from workbench.events import AskUserRequest, DisplayBubble, PermissionRequest, ScheduleProposalRequest
from workbench.tui.forms.schedule_screen import ScheduleScreen
from workbench.tui.screens.ask_user import AskUserScreen
from workbench.tui.screens.permission import PermissionScreen
from workbench.tui.widgets.bubbles.image_view import ImageView
from workbench.tui.widgets.bubbles.sortable_table import SortableTable
from workbench.tui.widgets.display_view import DisplayView

THEMES = ["workbench-dark", "workbench-light"]


def png(width: int, height: int, pixel) -> str:
    """An RGBA PNG whose pixel at ``(x, y)`` is ``pixel(x, y)``, base64-encoded."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height))
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
                            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")).decode()


SWATCH = png(12, 12, lambda x, y: (0x33, 0x66, 0xCC, 255))
SUNSET = png(24, 16, lambda x, y: (255 - y * 8, 90 + x * 6, 40 + y * 12, 255 if (x - 12) ** 2 + (y - 8) ** 2 < 60 else 90))

CHOICE = {"question": "Pick a favorite color.", "allowFreeformInput": True,
          "options": [{"label": "Red", "value": "red", "description": "warm"},
                      {"label": "Blue", "value": "blue", "description": "calm"},
                      {"label": "Green", "value": "green"}]}
DIFF = {"kind": "diff", "question": "Apply this change to settings.py?", "title": "settings.py",
        "before": 'DEBUG = True\nNAME = "demo"\nPORT = 8000\n',
        "after": 'DEBUG = False\nNAME = "demo"\nPORT = 8080\nHOST = "0.0.0.0"\n'}
FILES = {"kind": "files", "question": "Which notes should I summarize?", "multiselect": True,
         "entries": [{"path": "/home/person/notes/plants.md", "label": "plants.md", "description": "2 kB"},
                     {"path": "/home/person/notes/trips.md", "label": "trips.md", "description": "5 kB"},
                     {"path": "/home/person/todo.txt"}]}
IMAGE = {"kind": "image", "question": "Use this colour for the theme?", "dataB64": SWATCH,
         "mime": "image/png", "actions": [{"label": "Use it", "value": "use"},
                                          {"label": "Lighter", "value": "lighter"},
                                          {"label": "Darker", "value": "darker"}]}
TABLE = {"kind": "table", "question": "Who takes each task?", "columns": ["task", "owner", "due"],
         "rows": [["Water the plants", "", "Mon"], ["Book the dentist", "Ana", ""],
                  ["Renew the library books", "Bo", "Fri"]]}


@pytest.fixture(params=THEMES)
def themed_app(request, snapshot_app, workdir: Path, monkeypatch: pytest.MonkeyPatch):
    """An app in the theme of the test's parameter; local time is UTC."""
    monkeypatch.setenv("TZ", "UTC")
    home = workdir.parent / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(f'theme = "{request.param}"\n')
    return snapshot_app([])


async def settle(pilot) -> None:
    """Everything the form composes mounted and drawn (a table's rows mount their cells
    after the form is shown), images decoded, no blinking cursors, and that drawn."""
    app = pilot.app
    await until_shown(pilot, lambda: app.screen.is_mounted)
    screen = app.screen
    views = list(screen.query(ImageView))
    await wait_until(pilot, lambda: all(view.picture is not None or view.problem for view in views))
    for field in screen.query(Input):
        field.cursor_blink = False
    for area in screen.query(TextArea):
        area.cursor_blink = False
    await settled(pilot)  # the decoded pictures and the steady cursors drawn


def ask(*questions: dict):
    """A ``run_before`` that opens a form of ``questions``."""

    async def run_before(pilot) -> None:
        app = pilot.app
        await no_cursor_blink(pilot)
        request = AskUserRequest(tool="samples.sample_form", call_id="call_1", questions=list(questions))
        app.pending_answer = asyncio.ensure_future(app.responder.answer(request))
        await wait_until(pilot, lambda: isinstance(app.screen, AskUserScreen))
        await settle(pilot)

    return run_before


class TestAskUserForm:
    """The ask-user form, one kind of question at a time and all together."""

    def test_choice(self, snap_compare, themed_app) -> None:
        """A single choice with descriptions and a free-text answer."""
        assert snap_compare(themed_app, terminal_size=SMALL, run_before=ask(CHOICE))

    def test_diff(self, snap_compare, themed_app) -> None:
        """A change to accept or reject."""
        assert snap_compare(themed_app, terminal_size=SMALL, run_before=ask(DIFF))

    def test_files(self, snap_compare, themed_app) -> None:
        """Files to tick, several at once."""
        assert snap_compare(themed_app, terminal_size=SMALL, run_before=ask(FILES))

    def test_image(self, snap_compare, themed_app) -> None:
        """An image with the tool's own buttons."""
        assert snap_compare(themed_app, terminal_size=SMALL, run_before=ask(IMAGE))

    def test_table(self, snap_compare, themed_app) -> None:
        """An editable table of rows."""
        assert snap_compare(themed_app, terminal_size=SMALL, run_before=ask(TABLE))

    def test_several_questions_with_one_missing(self, snap_compare, themed_app) -> None:
        """Five questions in one form; Send points at the one without an answer."""
        opened = ask(CHOICE, DIFF, FILES, IMAGE, TABLE)

        async def run_before(pilot) -> None:
            await opened(pilot)
            await pilot.press("down", "enter", "ctrl+s")
            await settle(pilot)

        assert snap_compare(themed_app, terminal_size=SMALL, run_before=run_before)


PERMISSIONS = [
    {"kind": "read", "value": "/home/person", "reason": "Read the files you ask about in your home folder."},
    {"kind": "net", "value": "api.example.com:443", "reason": "Fetch the forecast.", "optional": False},
    {"kind": "net", "value": "*:443", "reason": "Follow links the forecast points to.", "optional": True},
    {"kind": "llm", "value": "", "reason": "Summarize the forecast in a sentence.", "optional": True},
]


class TestPermissionPrompt:
    """The permission prompt with broad and optional entries."""

    def test_prompt(self, snap_compare, themed_app) -> None:
        """The tool, each permission in words with its reason, and the four answers."""

        async def run_before(pilot) -> None:
            app = pilot.app
            await no_cursor_blink(pilot)
            request = PermissionRequest(tool="weather.forecast", permissions=PERMISSIONS)
            app.pending_answer = asyncio.ensure_future(app.responder.answer(request))
            await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
            await settle(pilot)

        assert snap_compare(themed_app, terminal_size=SMALL, run_before=run_before)

    def test_optional_entry_left_out(self, snap_compare, themed_app) -> None:
        """The first optional entry's box focused with Tab and unticked with Space."""

        async def run_before(pilot) -> None:
            app = pilot.app
            await no_cursor_blink(pilot)
            request = PermissionRequest(tool="weather.forecast", permissions=PERMISSIONS)
            app.pending_answer = asyncio.ensure_future(app.responder.answer(request))
            await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
            await pilot.press("tab", "space")
            await settle(pilot)

        assert snap_compare(themed_app, terminal_size=SMALL, run_before=run_before)


DRAFT = {"title": "Stand-up notes", "instruction": "Summarize what I did yesterday and what is due today.",
         "schedule": {"kind": "weekly", "weekdays": [1, 2, 3, 4, 5], "hour": 9, "minute": 0},
         "runMissed": False}


class TestScheduleReview:
    """The review of a proposed schedule before it is saved."""

    def test_weekly(self, snap_compare, themed_app) -> None:
        """A weekly draft: title, prompt, days, time, run missed, and what it comes to."""

        async def run_before(pilot) -> None:
            app = pilot.app
            await no_cursor_blink(pilot)
            request = ScheduleProposalRequest(tool="samples.sample_schedule", draft=DRAFT)
            app.pending_answer = asyncio.ensure_future(app.responder.answer(request))
            await wait_until(pilot, lambda: isinstance(app.screen, ScheduleScreen))
            await settle(pilot)

        assert snap_compare(themed_app, terminal_size=SMALL, run_before=run_before)


async def show(pilot, *bubbles: tuple[str, dict]) -> None:
    """Publish display bubbles on the host's bus, as a tool's ``ctx.display`` does."""
    app = pilot.app
    await no_cursor_blink(pilot)
    for display, payload in bubbles:
        app.host.bus.publish(DisplayBubble(call_id="call_1", display=display, payload=payload))
    await wait_until(pilot, lambda: len(app.chat.query(DisplayView)) == len(bubbles))
    await settle(pilot)


MARKDOWN = ("markdown", {"text": "## Forecast\n\nRain in the **morning**, sun after `14:00`.\n\n"
                                 "- wind: 12 km/h\n- high: 17 °C"})
PICTURE = ("image", {"dataB64": SUNSET, "mime": "image/png", "alt": "A sun behind thin cloud"})
TABLE_BUBBLE = ("table", {"columns": ["city", "high", "low", "sky"],
                          "rows": [["Lisbon", "21", "14", "sun"], ["Oslo", "9", "2", "rain"],
                                   ["Madrid", "24", "12", "sun"], ["Bergen", "8", "4", "rain"]]})
DIFF_BUBBLE = ("diff", {"title": "forecast.py",
                        "before": 'def high(days):\n    return max(days)\n',
                        "after": 'def high(days):\n    """The warmest day."""\n    return max(days, default=None)\n'})


class TestBubbles:
    """Display bubbles in the chat."""

    def test_markdown_and_image(self, snap_compare, themed_app) -> None:
        """A markdown bubble and an image with its alt text."""

        async def run_before(pilot) -> None:
            await show(pilot, MARKDOWN, PICTURE)

        assert snap_compare(themed_app, terminal_size=SMALL, run_before=run_before)

    def test_table_sorted_and_diff(self, snap_compare, themed_app) -> None:
        """A table sorted by its second column, descending, and a highlighted diff."""

        async def run_before(pilot) -> None:
            await show(pilot, TABLE_BUBBLE, DIFF_BUBBLE)
            table = pilot.app.chat.query_one(SortableTable)
            table.focus()
            await pilot.press("right", "s", "s")
            await settle(pilot)

        assert snap_compare(themed_app, terminal_size=SMALL, run_before=run_before)

    def test_diff_side_by_side(self, snap_compare, themed_app) -> None:
        """The diff bubble after v: before and after side by side."""

        async def run_before(pilot) -> None:
            await show(pilot, DIFF_BUBBLE)
            bubble = pilot.app.chat.query_one(DisplayView).bubble
            bubble.focus()
            await pilot.press("v")
            await settle(pilot)

        assert snap_compare(themed_app, terminal_size=SMALL, run_before=run_before)
