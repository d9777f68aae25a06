"""Images built to blow up when decoded — in a bubble and in an image question.

A few kilobytes of PNG can unpack to gigabytes (its data compresses zeros), and a
header can claim any size. Each decoder checks the size from the header before it
decodes, and never unpacks more than the header's pixels need: the bubble says why the
image is not shown, and the app goes on.
"""

from __future__ import annotations

import asyncio
import base64
import io
import struct
import tracemalloc
import zlib

import pytest

from visible import until_screen
from workbench.events import AskUserRequest, DisplayBubble
from workbench.tui.screens.ask_user import AskUserScreen
from workbench.tui.widgets.bubbles import pictures
from workbench.tui.widgets.bubbles.image_view import ImageView
from workbench.tui.widgets.display_view import DisplayView

pytestmark = pytest.mark.security

SIZE = (80, 24)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int, height: int, idat: bytes, color_type: int = 2) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", idat)
            + _chunk(b"IEND", b""))


def zeros_compressed(size: int) -> bytes:
    """``size`` zero bytes, deflated, without ever holding them."""
    deflate = zlib.compressobj(9)
    block = bytes(1 << 20)
    out = [deflate.compress(block) for _ in range(size >> 20)]
    return b"".join(out) + deflate.flush()


BOMB = png(16, 16, zeros_compressed(256 << 20))
"""A 16×16 PNG whose data unpacks to 256 MiB: a quarter of a megabyte on the wire."""

HUGE_HEADER = png(60_000, 60_000, zlib.compress(b"\x00" * 1000))
"""A PNG whose header claims 3.6 billion pixels, with almost no data."""


def huge_gif() -> bytes:
    """A GIF whose header claims 30000×30000, which Pillow would decode in full."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("P", (1, 1)).save(out, format="GIF")
    data = bytearray(out.getvalue())
    data[6:10] = struct.pack("<HH", 30_000, 30_000)        # the logical screen
    frame = data.index(b",")                               # the image descriptor
    data[frame + 5:frame + 9] = struct.pack("<HH", 30_000, 30_000)
    return bytes(data)


@pytest.mark.parametrize(("data", "words"), [
    (BOMB, "unpacks to more than its 16×16 pixels"),
    (HUGE_HEADER, "the image is 60000×60000"),
    (huge_gif(), "the image is larger than this view decodes"),
], ids=["png-that-unpacks-to-256-MiB", "png-header-of-60000x60000", "gif-header-of-30000x30000"])
def test_each_decoder_refuses_before_decoding(data, words):
    tracemalloc.start()
    try:
        with pytest.raises(pictures.PictureError, match=words):
            pictures.decode_image(data)
        # The image opened whole for terminal graphics is refused the same way.
        with pytest.raises(pictures.PictureError,
                           match=words if data is BOMB else "larger than this view decodes"):
            pictures.pillow_image(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, f"decoding took {peak} bytes"


def test_a_compressed_text_chunk_that_unpacks_to_256_mib_is_not_unpacked():
    """Metadata bombs too: a zTXt chunk of deflated zeros in front of a good image."""
    rows = b"".join(b"\x00" + bytes(16 * 3) for _ in range(16))
    good = png(16, 16, zlib.compress(rows))
    text = b"Comment\x00\x00" + zeros_compressed(256 << 20)
    ihdr_end = 8 + 12 + 13
    data = good[:ihdr_end] + _chunk(b"zTXt", text) + good[ihdr_end:]
    tracemalloc.start()
    try:
        try:
            picture = pictures.decode_image(data)
        except pictures.PictureError as exc:
            assert "too large" in str(exc).lower(), exc
        else:
            assert (picture.width, picture.height) == (16, 16)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, f"decoding took {peak} bytes"


async def test_a_bomb_in_a_bubble_is_not_shown_and_says_why(make_app, until):
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        for data, words in ((BOMB, "unpacks to more than"), (HUGE_HEADER, "60000×60000")):
            before = len(app.chat.query(DisplayView))
            app.host.bus.publish(DisplayBubble(call_id="call_1", display="image", payload={
                "dataB64": base64.b64encode(data).decode(), "mime": "image/png", "alt": "A bomb"}))
            await until(pilot, lambda before=before: len(app.chat.query(DisplayView)) > before)
            view = app.chat.query(DisplayView).last().query_one(ImageView)
            await until(pilot, lambda view=view: bool(view.problem))
            assert words in view.problem
            assert view.render_line(0).text.startswith("(image not shown: ")
        # The app goes on: a good image after the bombs is drawn.
        good = png(4, 4, zlib.compress((b"\x00" + b"\x33\x66\xcc" * 4) * 4))
        app.host.bus.publish(DisplayBubble(call_id="call_1", display="image", payload={
            "dataB64": base64.b64encode(good).decode(), "mime": "image/png", "alt": "Fine"}))
        await until(pilot, lambda: app.chat.query(DisplayView).last().query(ImageView)
                    and app.chat.query(DisplayView).last().query_one(ImageView).picture is not None)


async def test_a_bomb_in_an_image_question_is_not_shown_and_the_form_answers(make_app, until):
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        question = {"kind": "image", "question": "Keep it?", "mime": "image/png",
                    "dataB64": base64.b64encode(BOMB).decode(),
                    "actions": [{"label": "Keep it", "value": "keep"}]}
        request = AskUserRequest(tool="demo.ask", call_id="c1", questions=[question])
        answer = asyncio.ensure_future(app.responder.answer(request))
        await until_screen(pilot, AskUserScreen)
        view = app.screen.query_one(ImageView)
        await until(pilot, lambda: bool(view.problem))
        assert "unpacks to more than its 16×16 pixels" in view.problem
        await pilot.press("enter", "enter")
        await until(pilot, answer.done)
        assert answer.result() == ["keep"]
