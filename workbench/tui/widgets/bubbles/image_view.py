"""An image drawn in the terminal with half blocks (two pixels to a cell) or, where
the terminal draws images itself, with terminal graphics in the same cells.

Each half-block cell is ``▀`` with the upper pixel as its foreground and the lower
one as its background, which every true-color terminal shows. The image is decoded
in a thread (a big PNG takes seconds in pure Python); until then, and when it
cannot be decoded, the widget says so in one line. ``image_view`` picks the widget
for the way ``terminal_graphics`` chose.
"""

from __future__ import annotations

import math

from rich.color import Color as RichColor
from rich.segment import Segment
from rich.style import Style
from textual import work
from textual.color import Color
from textual.geometry import Size
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from workbench.tui.widgets.bubbles import terminal_graphics
from workbench.tui.widgets.bubbles.pictures import (Picture, PictureError, decode_base64, decode_image,
                                                    fit, pillow_image, shrink, working_copy)

UPPER_HALF = "▀"


class ImageView(Widget):
    """An image from base64 data, at most ``max_width`` cells wide and ``max_height``
    rows tall (None: as wide as there is room, as tall as that makes it).

    Args:
        data_b64: The image, base64-encoded.
        max_width: The widest it is drawn, in cells.
        max_height: The tallest it is drawn, in rows (two pixels each).
    """

    DEFAULT_CSS = """
    ImageView {
        width: auto;
        height: auto;
        &.-pending, &.-failed {
            color: $text-muted;
            text-style: italic;
        }
    }
    """

    picture: reactive[Picture | None] = reactive(None, layout=True)
    """The decoded image (shrunk to a working size), once decoded."""
    problem: reactive[str] = reactive("", layout=True)
    """Why the image cannot be drawn; empty when it can (or is still decoding)."""
    max_width: reactive[int | None] = reactive(48, layout=True)
    max_height: reactive[int | None] = reactive(10, layout=True)

    def __init__(self, data_b64: str, *, max_width: int | None = 48, max_height: int | None = 10,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.data_b64 = data_b64
        self.natural_size: tuple[int, int] | None = None
        """The image's own size in pixels, once decoded."""
        self.set_reactive(ImageView.max_width, max_width)
        self.set_reactive(ImageView.max_height, max_height)
        self._scaled: dict[tuple[int, int], Picture] = {}
        self.add_class("-pending")

    def on_mount(self) -> None:
        self.decode()

    @work(thread=True, exclusive=True, group="image-decode")
    def decode(self) -> None:
        """Decode the image off the event loop, then show it (or why it cannot be)."""
        try:
            data = decode_base64(self.data_b64)
            picture = decode_image(data)
            natural = (picture.width, picture.height)
            working = working_copy(picture)
            self.decoded_in_thread(data)
        except PictureError as exc:
            self.app.call_from_thread(self._failed, str(exc))
        else:
            self.app.call_from_thread(self._decoded, working, natural)

    def decoded_in_thread(self, data: bytes) -> None:
        """More work on the image's bytes, in the decoding thread, once they decode."""

    def _decoded(self, picture: Picture, natural: tuple[int, int]) -> None:
        self.natural_size = natural
        self.picture = picture
        self.remove_class("-pending")

    def _failed(self, problem: str) -> None:
        self.problem = problem
        self.remove_class("-pending")
        self.add_class("-failed")

    # --- size ----------------------------------------------------------------

    def cells(self, available: int) -> tuple[int, int]:
        """The drawn size ``(columns, rows)`` when ``available`` columns are free."""
        if self.picture is None or self.natural_size is None:
            return 0, 0
        width, height = self.natural_size
        max_width = max(1, min(available, self.max_width or available))
        limit_high = 2 * self.max_height if self.max_height else None
        # Growing is allowed when zoomed to the available width.
        if self.max_width is None and width < max_width:
            scale = max_width / width
            if limit_high is None or height * scale <= limit_high:
                width, height = max_width, max(1, round(height * scale))
        columns, pixels_high = fit(width, height, max_width, limit_high or height)
        return columns, math.ceil(pixels_high / 2)

    def _message(self) -> str:
        return f"(image not shown: {self.problem})" if self.problem else "(decoding the image…)"

    def get_content_width(self, container: Size, viewport: Size) -> int:
        if self.picture is None:
            return len(self._message())
        return self.cells(container.width)[0]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self.picture is None:
            return 1
        return max(1, self.cells(width)[1])

    # --- drawing -------------------------------------------------------------

    def _pixels(self, columns: int, rows: int) -> Picture:
        key = (columns, rows)
        scaled = self._scaled.get(key)
        if scaled is None:
            assert self.picture is not None and self.natural_size is not None
            width, height = self.natural_size
            pixels_high = max(1, min(2 * rows, round(height * columns / width)))
            scaled = shrink(self.picture, columns, pixels_high)
            self._scaled = {key: scaled}
        return scaled

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if self.picture is None:
            if y:
                return Strip.blank(width, self.rich_style)
            return Strip([Segment(self._message()[:width], self.rich_style)]).adjust_cell_length(
                width, self.rich_style)
        columns, rows = self.size.width, self.size.height
        pixels = self._pixels(columns, rows)
        background = self.background_colors[1]
        segments: list[Segment] = []
        top_y, bottom_y = 2 * y, 2 * y + 1
        for x in range(min(columns, pixels.width)):
            top = _blend(pixels, x, top_y, background)
            bottom = _blend(pixels, x, bottom_y, background)
            style = Style(color=top, bgcolor=bottom)
            if segments and segments[-1].style == style:
                segments[-1] = Segment(segments[-1].text + UPPER_HALF, style)
            else:
                segments.append(Segment(UPPER_HALF, style))
        return Strip(segments).adjust_cell_length(width, self.rich_style)


class GraphicImageView(ImageView):
    """An image drawn with terminal graphics in the cells the half-block view would
    take (so the chat lays it out, scrolls and unmounts it like any widget). Until
    it is decoded, and if Pillow cannot open it, it is drawn with half blocks.

    Args:
        data_b64: The image, base64-encoded.
        protocol: ``kitty`` or ``sixel``.
        max_width: The widest it is drawn, in cells.
        max_height: The tallest it is drawn, in rows.
    """

    DEFAULT_CSS = """
    GraphicImageView > .image-view--graphic {
        width: 100%;
        height: 100%;
    }
    """

    def __init__(self, data_b64: str, *, protocol: terminal_graphics.Protocol,
                 max_width: int | None = 48, max_height: int | None = 10,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(data_b64, max_width=max_width, max_height=max_height, id=id, classes=classes)
        self.protocol = protocol
        self._image = None

    def decoded_in_thread(self, data: bytes) -> None:
        try:
            self._image = pillow_image(data)
        except PictureError:
            self._image = None  # The half blocks still draw what was decoded.

    def _decoded(self, picture: Picture, natural: tuple[int, int]) -> None:
        super()._decoded(picture, natural)
        if self._image is not None:
            self.mount(graphic_widget(self.protocol, self._image))

    @property
    def graphic(self) -> Widget | None:
        """The widget drawing the terminal graphics, once mounted."""
        return next(iter(self.query_children(".image-view--graphic")), None)

    def render_line(self, y: int) -> Strip:
        if self.graphic is not None:
            return Strip.blank(self.size.width, self.rich_style)
        return super().render_line(y)


def graphic_widget(protocol: terminal_graphics.Protocol, image) -> Widget:
    """``textual_image``'s widget drawing the Pillow ``image`` with ``protocol``."""
    from textual_image.widget import SixelImage, TGPImage

    widget_class = TGPImage if protocol == "kitty" else SixelImage
    return widget_class(image, classes="image-view--graphic")


def image_view(data_b64: str, *, max_width: int | None = 48, max_height: int | None = 10) -> ImageView:
    """The view for an image, drawn the way ``terminal_graphics`` chose."""
    protocol = terminal_graphics.chosen()
    if protocol is None:
        return ImageView(data_b64, max_width=max_width, max_height=max_height)
    return GraphicImageView(data_b64, protocol=protocol, max_width=max_width, max_height=max_height)


def _blend(picture: Picture, x: int, y: int, background: Color) -> RichColor:
    """The pixel at ``(x, y)`` over ``background``; the background past the edge."""
    if y >= picture.height:
        return background.rich_color
    r, g, b, a = picture.pixel(x, y)
    if a == 255:
        return RichColor.from_rgb(r, g, b)
    mixed = background.blend(Color(r, g, b), a / 255)
    return mixed.rich_color
