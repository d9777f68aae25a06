"""Pilot tests of the display bubbles a tool pushes with ``ctx.display``: markdown,
image, table and diff, in the chat, with their keys and the mouse; and the PNG
decoding the image bubble draws from."""

from __future__ import annotations

import base64
import itertools
import struct
import zlib
from pathlib import Path

import pytest
from textual.widgets import Markdown

from visible import settled, until_shown

from workbench.events import DisplayBubble, ToolCallEnded
from workbench.tui.widgets.bubbles.bubble import Bubble, DiffBubble, ImageBubble, MarkdownBubble, TableBubble
from workbench.tui.widgets.bubbles.diff_view import COMPARE_AT_ONCE, DiffView
from workbench.tui.widgets.bubbles.image_view import ImageView
from workbench.tui.widgets.bubbles.pictures import PictureError, decode_image
from workbench.tui.widgets.bubbles.sortable_table import SortableTable
from workbench.tui.widgets.display_view import DisplayView

SIZE = (80, 24)


# --- a PNG writer for the tests: every colour type, depth, filter and interlacing ---


ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def _pack(samples: list[int], depth: int) -> bytes:
    if depth == 8:
        return bytes(samples)
    if depth == 16:
        return b"".join(struct.pack(">H", sample) for sample in samples)
    out, per_byte = bytearray(), 8 // depth
    for start in range(0, len(samples), per_byte):
        byte = 0
        for index, sample in enumerate(samples[start:start + per_byte]):
            byte |= sample << (8 - depth * (index + 1))
        out.append(byte)
    return bytes(out)


def _filter(kind: int, line: bytes, previous: bytes, step: int) -> bytes:
    out = bytearray()
    for i, value in enumerate(line):
        a = line[i - step] if i >= step else 0
        b = previous[i] if previous else 0
        c = previous[i - step] if previous and i >= step else 0
        if kind == 0:
            predictor = 0
        elif kind == 1:
            predictor = a
        elif kind == 2:
            predictor = b
        elif kind == 3:
            predictor = (a + b) // 2
        else:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            predictor = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
        out.append((value - predictor) & 0xFF)
    return bytes([kind]) + bytes(out)


def write_png(rows: list[list[tuple[int, ...]]], color_type: int, depth: int = 8, *,
              interlace: bool = False, palette: bytes = b"", transparency: bytes = b"") -> bytes:
    """``rows`` of pixels, each a tuple of samples, as a PNG; filters cycle 0 to 4."""
    height, width = len(rows), len(rows[0])
    step = max(1, CHANNELS[color_type] * depth // 8)
    filters = itertools.cycle(range(5))
    data = bytearray()
    for x0, y0, dx, dy in (ADAM7 if interlace else ((0, 0, 1, 1),)):
        previous = b""
        for y in range(y0, height, dy):
            samples = [sample for x in range(x0, width, dx) for sample in rows[y][x]]
            if not samples:
                continue
            line = _pack(samples, depth)
            data += _filter(next(filters), line, previous, step)
            previous = line

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, color_type,
                                                           0, 0, int(interlace)))
    if palette:
        out += chunk(b"PLTE", palette)
    if transparency:
        out += chunk(b"tRNS", transparency)
    return out + chunk(b"IDAT", zlib.compress(bytes(data))) + chunk(b"IEND", b"")


def gradient(width: int, height: int) -> list[list[tuple[int, int, int, int]]]:
    return [[(x * 20 % 256, y * 30 % 256, (x * y * 7) % 256, (x + y) * 16 % 256) for x in range(width)]
            for y in range(height)]


class TestPngDecoding:
    @pytest.mark.parametrize("interlace", [False, True])
    def test_rgba_with_every_filter(self, interlace: bool) -> None:
        pixels = gradient(11, 9)
        picture = decode_image(write_png(pixels, 6, interlace=interlace))
        assert (picture.width, picture.height) == (11, 9)
        assert [[picture.pixel(x, y) for x in range(11)] for y in range(9)] == pixels

    def test_rgb_and_grey_and_grey_alpha(self) -> None:
        rgba = gradient(5, 4)
        rgb = decode_image(write_png([[p[:3] for p in row] for row in rgba], 2))
        assert rgb.pixel(3, 2) == (*rgba[2][3][:3], 255)
        grey = decode_image(write_png([[(p[0],) for p in row] for row in rgba], 0))
        assert grey.pixel(4, 3) == (rgba[3][4][0],) * 3 + (255,)
        grey_alpha = decode_image(write_png([[(p[0], p[3]) for p in row] for row in rgba], 4))
        assert grey_alpha.pixel(1, 1) == (rgba[1][1][0],) * 3 + (rgba[1][1][3],)

    def test_palette_with_transparency_at_two_bits(self) -> None:
        palette = bytes([255, 0, 0, 0, 255, 0, 0, 0, 255, 9, 9, 9])
        rows = [[(x % 4,) for x in range(7)] for _ in range(3)]
        picture = decode_image(write_png(rows, 3, 2, palette=palette, transparency=bytes([255, 128])))
        assert [picture.pixel(x, 0) for x in range(4)] == [
            (255, 0, 0, 255), (0, 255, 0, 128), (0, 0, 255, 255), (9, 9, 9, 255)]

    def test_sixteen_bit_and_one_bit(self) -> None:
        wide = decode_image(write_png([[(0x1234, 0xABCD, 0xFFFF)]], 2, 16))
        assert wide.pixel(0, 0) == (0x12, 0xAB, 0xFF, 255)
        bits = decode_image(write_png([[(1,), (0,), (1,)]], 0, 1))
        assert [bits.pixel(x, 0)[0] for x in range(3)] == [255, 0, 255]

    def test_broken_data_is_refused(self) -> None:
        good = write_png(gradient(3, 3), 6)
        with pytest.raises(PictureError):
            decode_image(good[:40])
        with pytest.raises(PictureError, match="no header"):
            decode_image(b"\x89PNG\r\n\x1a\n")


# --- bubbles in the chat ------------------------------------------------------------


def png_b64(rows: list[list[tuple[int, ...]]], color_type: int = 2) -> str:
    return base64.b64encode(write_png(rows, color_type)).decode()


BLUE = png_b64([[(0x33, 0x66, 0xCC)] * 16 for _ in range(16)])


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


async def tab_to(pilot, widget, presses: int = 12) -> None:
    """Press Tab until ``widget`` has focus, as a person would."""
    for _ in range(presses):
        if pilot.app.focused is widget:
            return
        await pilot.press("tab")
    assert pilot.app.focused is widget, f"Tab never reached {widget!r}"


def enable_samples(workdir: Path) -> None:
    home = workdir.parent / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[extensions]\nsamples = true\n")


class TestSampleDisplay:
    async def test_the_sample_tool_shows_four_bubbles(self, make_app, until, workdir: Path) -> None:
        enable_samples(workdir)
        app = make_app([{"tool_calls": [{"name": "sample_display", "arguments": {"title": "Samples"}}]},
                        {"text": "Shown."}])
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.host.loading.loaded_at > 0)
            seen: list = []
            app.host.bus.subscribe(seen.append)
            await pilot.press(*"show", "enter")
            await until(pilot, lambda: any(isinstance(e, ToolCallEnded) for e in seen))
            await until(pilot, lambda: len(app.chat.query(DisplayView)) == 4)
            views = list(app.chat.query(DisplayView))
            assert [type(view.bubble) for view in views] == [MarkdownBubble, ImageBubble, TableBubble, DiffBubble]
            markdown, image, table, diff = (view.bubble for view in views)
            assert markdown.query_one(Markdown).source.startswith("## Samples\n")
            await until(pilot, lambda: image.query_one(ImageView).picture is not None)
            assert image.query_one(ImageView).natural_size == (32, 32)
            assert image.query_one(".image-bubble--alt").render().plain == "A blue swatch"
            assert table.query_one(SortableTable).rows_shown[0] == ["markdown", "text"]
            assert diff.query_one(DiffView).changed


class TestMarkdownBubble:
    async def test_tab_reaches_it_and_c_copies_the_source(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            bubble = await show(app, pilot, until, "markdown", {"text": "# Title\n\nSome *text*."})
            assert bubble.query_one(Markdown).source == "# Title\n\nSome *text*."
            await tab_to(pilot, bubble)
            await pilot.press("c")
            assert app.clipboard == "# Title\n\nSome *text*."

    async def test_missing_text_is_an_empty_bubble(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            bubble = await show(app, pilot, until, "markdown", {})
            assert bubble.query_one(Markdown).source == ""


class TestImageBubble:
    async def test_drawn_with_half_blocks_and_the_alt_text(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            bubble = await show(app, pilot, until, "image",
                                {"dataB64": BLUE, "mime": "image/png", "alt": "A blue square"})
            view = bubble.query_one(ImageView)
            assert view.size == (16, 8)  # two pixels to a cell, top and bottom
            line = view.render_line(3)
            assert line.text == "▀" * 16
            assert {s.style.color.triplet.hex for s in line} == {"#3366cc"}
            assert {s.style.bgcolor.triplet.hex for s in line} == {"#3366cc"}
            assert bubble.query_one(".image-bubble--alt").render().plain == "A blue square"
            assert "image/png" in bubble.query_one(".bubble--header").render().plain

    async def test_z_zooms_to_the_chats_width_and_back(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            bubble = await show(app, pilot, until, "image", {"dataB64": BLUE, "mime": "image/png"})
            view = bubble.query_one(ImageView)
            await tab_to(pilot, bubble)
            await pilot.press("z")
            await until_shown(pilot, lambda: view.size.width == bubble.content_region.width)
            assert view.size.height == (view.size.width + 1) // 2  # a square, two pixels a cell
            await pilot.press("z")
            await until_shown(pilot, lambda: view.size == (16, 8))
            assert bubble.query_one(".image-bubble--alt").render().plain == "(no description)"

    async def test_transparent_pixels_show_the_bubbles_background(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            half = png_b64([[(255, 0, 0, 255), (255, 0, 0, 0)] for _ in range(2)], color_type=6)
            bubble = await show(app, pilot, until, "image", {"dataB64": half, "mime": "image/png"})
            view = bubble.query_one(ImageView)
            red, clear = list(view.render_line(0))[0].style.color, list(view.render_line(0))[-1].style.color
            assert red.triplet.hex == "#ff0000"
            assert clear.triplet.hex == view.background_colors[1].hex.lower()

    async def test_an_image_that_cannot_be_drawn_keeps_its_alt_text(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            gif = base64.b64encode(b"GIF89a\x01\x00\x01\x00").decode()
            bubble = await show(app, pilot, until, "image", {"dataB64": gif, "mime": "image/gif",
                                                             "alt": "A tiny gif"})
            view = bubble.query_one(ImageView)
            assert view.problem
            assert view.render_line(0).text.startswith("(image not shown: ")
            assert bubble.query_one(".image-bubble--alt").render().plain == "A tiny gif"


COLUMNS = ["name", "size", "kind"]
ROWS = [["beta", "12", "file"], ["Alpha", "3", ""], ["gamma", "100", "folder"]]


class TestTableBubble:
    async def test_s_sorts_the_picked_column_and_again_reverses(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            bubble = await show(app, pilot, until, "table", {"columns": COLUMNS, "rows": ROWS})
            table = bubble.query_one(SortableTable)
            assert "3 rows × 3 columns" in bubble.query_one(".bubble--header").render().plain
            await tab_to(pilot, table)
            await pilot.press("s")
            assert [row[0] for row in table.rows_shown] == ["Alpha", "beta", "gamma"]
            assert str(table.columns[table.ordered_columns[0].key].label) == "name ▲"
            await pilot.press("s")
            assert [row[0] for row in table.rows_shown] == ["gamma", "beta", "Alpha"]
            assert str(table.ordered_columns[0].label) == "name ▼"
            await pilot.press("right", "s")  # sizes sort as numbers, not as text
            assert [row[1] for row in table.rows_shown] == ["3", "12", "100"]
            assert str(table.ordered_columns[0].label) == "name"
            assert str(table.ordered_columns[1].label) == "size ▲"
            await pilot.press("right", "s", "s")  # blanks stay last either way
            assert [row[2] for row in table.rows_shown] == ["folder", "file", ""]

    async def test_clicking_a_header_sorts_and_again_reverses(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            bubble = await show(app, pilot, until, "table", {"columns": COLUMNS, "rows": ROWS})
            table = bubble.query_one(SortableTable)
            size_x = sum(column.get_render_width(table) for column in table.ordered_columns[:1]) + 1
            await pilot.click(table, offset=(size_x, 0))
            assert table.sorted_by == 1
            assert [row[1] for row in table.rows_shown] == ["3", "12", "100"]
            await pilot.click(table, offset=(size_x, 0))
            assert [row[1] for row in table.rows_shown] == ["100", "12", "3"]

    async def test_a_wide_table_scrolls_sideways(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            columns = [f"column number {index}" for index in range(10)]
            rows = [[f"value {row}-{index}" for index in range(10)] for row in range(3)]
            bubble = await show(app, pilot, until, "table", {"columns": columns, "rows": rows})
            table = bubble.query_one(SortableTable)
            assert table.size.width <= SIZE[0]
            assert table.max_scroll_x > 0
            await tab_to(pilot, table)
            await pilot.press(*["right"] * 9)
            await until_shown(pilot, lambda: table.scroll_x > 0)
            assert table.cursor_column == 9

    async def test_odd_payloads_are_shown_as_text(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            bubble = await show(app, pilot, until, "table",
                                {"columns": ["a"], "rows": [[1, None, True], "loose"]})
            table = bubble.query_one(SortableTable)
            assert table.names == ["a", "column 2", "column 3"]
            assert table.rows_shown == [["1", "", "True"], ["loose", "", ""]]

    async def test_c_copies_the_rows_as_shown(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            bubble = await show(app, pilot, until, "table", {"columns": COLUMNS, "rows": ROWS})
            table = bubble.query_one(SortableTable)
            await tab_to(pilot, table)
            await pilot.press("s", "c")
            assert app.clipboard == "name\tsize\tkind\nAlpha\t3\t\nbeta\t12\tfile\ngamma\t100\tfolder"


BEFORE = 'def greet(name):\n    return "hi " + name\n\nprint(greet("x"))\n'
AFTER = 'def greet(name):\n    """Say hello."""\n    return "hello " + name\n\nprint(greet("x"))\n'


class TestDiffBubble:
    async def test_unified_with_highlighting(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            bubble = await show(app, pilot, until, "diff", {"before": BEFORE, "after": AFTER,
                                                            "title": "greet.py"})
            view = bubble.query_one(DiffView)
            assert view.language == "python"
            header = bubble.query_one(".bubble--header").render().plain
            assert "greet.py" in header and "+2" in header and "−1" in header
            lines = view.lines(70)
            plain = [line.plain.rstrip() for line in lines]
            assert plain[0] == "@@ -1,4 +1,5 @@"
            assert plain[1] == '1 1  def greet(name):'
            assert plain[2] == '2   -    return "hi " + name'
            assert plain[3] == '  2 +    """Say hello."""'
            assert plain[4] == '  3 +    return "hello " + name'
            # ``def`` is styled as a keyword; the removed line has the error background.
            assert any(span.style for span in lines[1].spans if lines[1].plain[span.start:span.end] == "def")
            assert any("$error-muted" in str(span.style) for span in lines[2].spans)
            assert any("$success-muted" in str(span.style) for span in lines[3].spans)

    async def test_v_switches_to_side_by_side_and_back(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            bubble = await show(app, pilot, until, "diff", {"before": BEFORE, "after": AFTER})
            view = bubble.query_one(DiffView)
            unified_height = view.size.height
            await tab_to(pilot, bubble)
            await pilot.press("v")
            await until_shown(pilot, lambda: view.split)
            rows = [line.plain for line in view.lines(view.size.width)]
            changed = next(row for row in rows if '"hi "' in row)
            left, _, right = changed.partition("│")
            assert '-    return "hi " + name' in left
            assert '+    """Say hello."""' in right
            assert view.size.height < unified_height
            await pilot.press("v")
            await until_shown(pilot, lambda: not view.split and view.size.height == unified_height)

    async def test_long_lines_fold_instead_of_being_cut(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            long = "x = '" + "abcdefghij" * 12 + "'"
            bubble = await show(app, pilot, until, "diff", {"before": "x = 1\n", "after": long + "\n"})
            view = bubble.query_one(DiffView)
            text = "".join(line.plain[5:].rstrip() for line in view.lines(view.size.width)[2:])
            assert long in text
            assert all(line.cell_length <= view.size.width for line in view.lines(view.size.width))

    async def test_a_large_change_is_compared_off_the_event_loop(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            lines = [f"line {index}: " + "word " * 8 for index in range(1500)]
            before, after = "\n".join(lines), "\n".join(lines[:700] + ["a new line"] + lines[701:])
            assert len(before) + len(after) > COMPARE_AT_ONCE
            app.host.bus.publish(DisplayBubble(call_id="c", display="diff",
                                               payload={"before": before, "after": after}))
            await until(pilot, lambda: bool(app.chat.query(DiffBubble)))
            bubble = app.chat.query_one(DiffBubble)
            view = bubble.query_one(DiffView)
            await until(pilot, lambda: view.change is not None)
            await until_shown(pilot, lambda: "change  +1 −1" in bubble.query_one(".bubble--header").render().plain)
            plain = [line.plain.rstrip() for line in view.lines(70)]
            assert plain[0] == "@@ -698,7 +698,7 @@"
            assert any(line.endswith("+a new line") for line in plain)
            assert view.size.height == len(plain)

    async def test_c_copies_a_unified_diff(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            bubble = await show(app, pilot, until, "diff", {"before": "a\n", "after": "b\n"})
            await tab_to(pilot, bubble)
            await pilot.press("c")
            assert app.clipboard == "--- before\n+++ after\n@@ -1 +1 @@\n-a\n+b"

    async def test_no_change(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            bubble = await show(app, pilot, until, "diff", {"before": "same\n", "after": "same\n"})
            assert [line.plain for line in bubble.query_one(DiffView).lines(60)] == ["(no changes)"]
