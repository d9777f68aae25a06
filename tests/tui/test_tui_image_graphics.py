"""Pilot tests of how image bubbles are drawn: terminal graphics where the terminal
draws them, half blocks otherwise, and the ``tui.images`` setting that forces either.

The terminal's answer is the one thing faked: ``ask`` stands for the question
``terminal_graphics`` sends before the app starts (a Pilot app has no terminal)."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path

import pytest
from textual_image.widget import SixelImage, TGPImage
from visible import on_screen, screen_text, settled, until_shown

from workbench.config.settings import validate
from workbench.errors import ConfigError
from workbench.events import DisplayBubble
from workbench.tui.widgets.bubbles import terminal_graphics
from workbench.tui.widgets.bubbles.bubble import Bubble, MarkdownBubble
from workbench.tui.widgets.bubbles.image_view import GraphicImageView, ImageView
from workbench.tui.widgets.display_view import DisplayView

SIZE = (80, 24)
PLAIN = {"TERM": "xterm-256color"}
KITTY = {"TERM": "xterm-kitty", "KITTY_WINDOW_ID": "1"}


def png_b64(width: int, height: int, rgb: tuple[int, int, int]) -> str:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
    return base64.b64encode(data).decode()


BLUE = png_b64(16, 16, (0x33, 0x66, 0xCC))


class Terminal:
    """The terminal's answer to "which images do you draw?", and whether it was asked."""

    def __init__(self, answer: terminal_graphics.Protocol | None) -> None:
        self.answer = answer
        self.asked = 0

    def __call__(self) -> terminal_graphics.Protocol | None:
        self.asked += 1
        return self.answer


@pytest.fixture(autouse=True)
def _half_blocks_after() -> None:
    """Every test leaves images drawn with half blocks, as the other tests expect."""
    yield
    terminal_graphics.use(None)


def configure(workdir: Path, images: str) -> None:
    home = workdir.parent / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(f'[tui]\nimages = "{images}"\n')


def prepare(app, env: dict[str, str], terminal: Terminal) -> terminal_graphics.Protocol | None:
    """What ``workbench`` does before the app runs, with the app's own config."""
    return terminal_graphics.prepare(str(app.host.config.get("tui.images")), env, ask=terminal)


async def show(app, pilot, until, display: str, payload: dict) -> Bubble:
    """Publish a display bubble on the host's bus, as a tool's ``ctx.display`` does."""
    before = len(app.chat.query(DisplayView))
    app.host.bus.publish(DisplayBubble(call_id="call_1", display=display, payload=payload))
    await until(pilot, lambda: len(app.chat.query(DisplayView)) > before)
    view = app.chat.query(DisplayView).last()
    images = list(view.query(ImageView))
    await until(pilot, lambda: all(image.picture is not None or image.problem for image in images))
    await settled(pilot)  # the decoded pictures drawn
    return view.bubble


def alt_text(bubble: Bubble) -> str:
    return bubble.query_one(".image-bubble--alt").render().plain


class TestChoice:
    async def test_auto_draws_graphics_when_the_terminal_says_it_can(self, make_app, until) -> None:
        app = make_app([])
        terminal = Terminal("kitty")
        assert prepare(app, KITTY, terminal) == "kitty"
        async with app.run_test(size=SIZE) as pilot:
            bubble = await show(app, pilot, until, "image",
                                {"dataB64": BLUE, "mime": "image/png", "alt": "A blue square"})
            view = bubble.query_one(ImageView)
            assert isinstance(view, GraphicImageView)
            await until(pilot, lambda: view.graphic is not None)
            assert isinstance(view.graphic, TGPImage)
            assert view.size == (16, 8)  # the cells the half blocks would take
            assert view.graphic.size == view.size
            assert alt_text(bubble) == "A blue square"
        assert terminal.asked == 1

    async def test_auto_draws_half_blocks_when_the_terminal_says_nothing(self, make_app, until) -> None:
        app = make_app([])
        terminal = Terminal(None)
        assert prepare(app, KITTY, terminal) is None
        async with app.run_test(size=SIZE) as pilot:
            bubble = await show(app, pilot, until, "image",
                                {"dataB64": BLUE, "mime": "image/png", "alt": "A blue square"})
            view = bubble.query_one(ImageView)
            assert type(view) is ImageView
            assert view.render_line(3).text == "▀" * 16
            assert alt_text(bubble) == "A blue square"

    async def test_auto_does_not_ask_a_terminal_that_does_not_name_itself(self, make_app, until) -> None:
        app = make_app([])
        terminal = Terminal("sixel")
        assert prepare(app, PLAIN, terminal) is None
        assert prepare(app, dict(KITTY, TMUX="/tmp/tmux-1/default,1,0"), terminal) is None
        assert terminal.asked == 0
        async with app.run_test(size=SIZE) as pilot:
            bubble = await show(app, pilot, until, "image", {"dataB64": BLUE, "mime": "image/png"})
            assert type(bubble.query_one(ImageView)) is ImageView
            assert alt_text(bubble) == "(no description)"

    async def test_graphics_setting_draws_sixel_for_a_silent_terminal(self, make_app, until,
                                                                      workdir: Path) -> None:
        configure(workdir, "graphics")
        app = make_app([])
        terminal = Terminal(None)
        assert prepare(app, PLAIN, terminal) == "sixel"
        async with app.run_test(size=SIZE) as pilot:
            bubble = await show(app, pilot, until, "image",
                                {"dataB64": BLUE, "mime": "image/png", "alt": "A blue square"})
            view = bubble.query_one(ImageView)
            await until(pilot, lambda: isinstance(view, GraphicImageView) and view.graphic is not None)
            assert isinstance(view.graphic, SixelImage)
            assert alt_text(bubble) == "A blue square"

    async def test_halfblock_setting_never_asks(self, make_app, until, workdir: Path) -> None:
        configure(workdir, "halfblock")
        app = make_app([])
        terminal = Terminal("kitty")
        assert prepare(app, KITTY, terminal) is None
        assert terminal.asked == 0
        async with app.run_test(size=SIZE) as pilot:
            bubble = await show(app, pilot, until, "image",
                                {"dataB64": BLUE, "mime": "image/png", "alt": "A blue square"})
            assert type(bubble.query_one(ImageView)) is ImageView
            assert alt_text(bubble) == "A blue square"

    def test_the_setting_takes_only_its_three_values(self) -> None:
        assert validate("tui.images", "graphics") == "graphics"
        with pytest.raises(ConfigError, match="'auto' or 'graphics' or 'halfblock'"):
            validate("tui.images", "sixel")


class TestGraphics:
    async def test_a_broken_image_still_says_why(self, make_app, until) -> None:
        app = make_app([])
        terminal_graphics.use("kitty")
        async with app.run_test(size=SIZE) as pilot:
            broken = base64.b64encode(b"\x89PNG\r\n\x1a\nnot really").decode()
            bubble = await show(app, pilot, until, "image", {"dataB64": broken, "mime": "image/png",
                                                             "alt": "A broken square"})
            view = bubble.query_one(ImageView)
            assert isinstance(view, GraphicImageView)
            assert view.problem
            assert view.graphic is None
            assert view.render_line(0).text.startswith("(image not shown: ")
            assert alt_text(bubble) == "A broken square"

    async def test_scrolled_out_of_view_the_image_is_not_drawn(self, make_app, until) -> None:
        app = make_app([])
        terminal_graphics.use("kitty")
        async with app.run_test(size=SIZE) as pilot:
            bubble = await show(app, pilot, until, "image",
                                {"dataB64": BLUE, "mime": "image/png", "alt": "A blue square"})
            view = bubble.query_one(ImageView)
            await until(pilot, lambda: view.graphic is not None)
            graphic = view.graphic
            await until(pilot, lambda: on_screen(app, graphic))
            assert _placeholders_on_screen(app)
            for index in range(6):
                await show(app, pilot, until, "markdown", {"text": "\n\n".join(f"Line {index}.{n}"
                                                                               for n in range(8))})
            await until_shown(pilot, lambda: not on_screen(app, graphic))
            assert not _placeholders_on_screen(app)
            assert isinstance(app.chat.query(DisplayView).last().bubble, MarkdownBubble)


def _placeholders_on_screen(app) -> bool:
    """Whether any cell on screen holds Kitty's image placeholder (U+10EEEE)."""
    return "\U0010eeee" in screen_text(app)
