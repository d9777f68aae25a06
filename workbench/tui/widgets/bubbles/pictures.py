"""Decoded images for the terminal: read with Pillow, bounded before anything is
decompressed, and shrunk to a size a terminal can draw.

The TUI draws images with half blocks (two pixels to a cell), which works in every
terminal with true color, or with terminal graphics from a Pillow image; this
module only turns bytes into pixels. It imports nothing of Textual, Pillow only
when it is needed, and its work is slow enough for big images that callers run it
in a thread.
"""

from __future__ import annotations

import base64
import binascii
import struct
import zlib
from dataclasses import dataclass

MAX_PIXELS = 4_000_000
"""The largest image (width × height) decoded: nothing a terminal draws needs more."""

MAX_DECODED_BYTES = 32 << 20
"""The most an image may take once decoded (width × height × channels × bytes per
sample), checked from its header before anything is decompressed: a few kilobytes
of PNG or GIF can otherwise unpack to gigabytes."""

WORKING_SIZE = (240, 160)
"""What a decoded image is shrunk to at most: more than any terminal cell grid shows."""

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4),
          (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))
"""Interlace passes: x start, y start, x step, y step."""

_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
"""Samples per pixel for each PNG color type."""


class PictureError(ValueError):
    """The data is not an image this module can decode; the message says why."""


def check_size(width: int, height: int, channels: int, bytes_per_sample: float = 1) -> None:
    """Refuse, from its header, an image too large to decode here.

    Raises:
        PictureError: It has more than ``MAX_PIXELS`` pixels or would take more than
            ``MAX_DECODED_BYTES`` decoded.
    """
    decoded = int(width * height * channels * bytes_per_sample)
    if width * height > MAX_PIXELS or decoded > MAX_DECODED_BYTES:
        raise PictureError(f"the image is {width}×{height} ({decoded:,} bytes decoded), larger "
                           f"than this view decodes ({MAX_PIXELS:,} pixels, "
                           f"{MAX_DECODED_BYTES:,} bytes)")


@dataclass(frozen=True)
class Picture:
    """Pixels, row by row, four bytes (red, green, blue, alpha) each."""

    width: int
    height: int
    rgba: bytes

    def pixel(self, x: int, y: int) -> tuple[int, int, int, int]:
        start = (y * self.width + x) * 4
        r, g, b, a = self.rgba[start:start + 4]
        return r, g, b, a


def decode_base64(data_b64: str) -> bytes:
    """The bytes a ``dataB64`` field holds.

    Raises:
        PictureError: It is not base64.
    """
    try:
        return base64.b64decode(data_b64, validate=False)
    except (binascii.Error, ValueError, TypeError) as exc:
        raise PictureError("the image data is not base64") from exc


def decode_image(data: bytes) -> Picture:
    """Decode ``data`` (any format Pillow reads), shrunk to at most ``WORKING_SIZE``.

    Raises:
        PictureError: The format is unknown, the data is broken, or the image is larger
            than ``check_size`` allows (said from its header, before decoding).
    """
    try:
        with _open_checked(data) as image:
            image.thumbnail(WORKING_SIZE)
            converted = image.convert("RGBA")
            return Picture(converted.width, converted.height, converted.tobytes())
    except PictureError:
        raise
    except Exception as exc:  # Pillow raises many kinds for unreadable data.
        raise PictureError(f"the image cannot be read: {exc}") from exc


def pillow_image(data: bytes):
    """``data`` opened and read by Pillow, as a ``PIL.Image.Image`` (for terminal graphics).

    Raises:
        PictureError: Pillow cannot read it.
    """
    try:
        image = _open_checked(data)
        image.load()
    except PictureError:
        raise
    except Exception as exc:  # Pillow raises many kinds for unreadable data.
        raise PictureError(f"the image cannot be read: {exc}") from exc
    return image


def _open_checked(data: bytes):
    """Pillow's image of ``data`` with only its header read, refused when too large."""
    import io

    from PIL import Image

    if data.startswith(PNG_SIGNATURE):
        check_png(data)

    # Pillow's own guard too, for what it decodes beyond the header (frames, tiles).
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    try:
        image = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as exc:
        raise PictureError(f"the image is larger than this view decodes ({exc})") from None
    check_size(image.width, image.height, max(len(image.getbands()), 1),
               2 if image.mode.startswith("I;16") or image.mode in ("I", "F") else 1)
    return image


def check_png(data: bytes) -> None:
    """Refuse a PNG whose header claims too many pixels, or whose data unpacks to more
    than its pixels need: it is inflated at most that far, never further.

    Raises:
        PictureError: The PNG has no header, is too large, or its data is broken or
            unpacks to more than its header's pixels.
    """
    header = None
    compressed = bytearray()
    for kind, body in _chunks(data):
        if kind == b"IHDR":
            if len(body) != 13:
                raise PictureError("the PNG header is broken")
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            compressed += body
        elif kind == b"IEND":
            break
    if header is None:
        raise PictureError("the PNG has no header")
    width, height, depth, color_type, _compression, _filter, interlace = header
    if color_type not in _CHANNELS or depth not in (1, 2, 4, 8, 16):
        raise PictureError(f"unsupported PNG color type {color_type} at depth {depth}")
    if width == 0 or height == 0:
        raise PictureError("the PNG has no pixels")
    channels = _CHANNELS[color_type]
    check_size(width, height, channels, depth / 8)
    passes = _ADAM7 if interlace else ((0, 0, 1, 1),)
    expected = sum(h * (1 + (w * channels * depth + 7) // 8)
                   for w, h in (_pass_size(width, height, pass_) for pass_ in passes) if w and h)
    try:
        inflate = zlib.decompressobj()
        inflate.decompress(bytes(compressed), expected)
        more = inflate.decompress(inflate.unconsumed_tail, 1) if inflate.unconsumed_tail else b""
    except zlib.error as exc:
        raise PictureError("the PNG data is broken") from exc
    if more:
        raise PictureError(f"the PNG's data unpacks to more than its {width}×{height} pixels "
                           "need: it is not drawn")


def _chunks(data: bytes):
    offset = len(PNG_SIGNATURE)
    while offset + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if len(body) != length:
            raise PictureError("the PNG is cut short")
        yield kind, body
        offset += 12 + length


def _pass_size(width: int, height: int, pass_: tuple[int, int, int, int]) -> tuple[int, int]:
    """The pixels of one interlace pass (the whole image when not interlaced)."""
    x0, y0, dx, dy = pass_
    return ((width - x0 + dx - 1) // dx if width > x0 else 0,
            (height - y0 + dy - 1) // dy if height > y0 else 0)


def shrink(picture: Picture, width: int, height: int) -> Picture:
    """``picture`` at ``width`` × ``height``, each new pixel the average of the
    pixels it covers (weighted by alpha); nearest pixel when growing."""
    width, height = max(1, width), max(1, height)
    if (width, height) == (picture.width, picture.height):
        return picture
    out = bytearray(width * height * 4)
    source = picture.rgba
    for y in range(height):
        top = y * picture.height // height
        bottom = max(top + 1, (y + 1) * picture.height // height)
        for x in range(width):
            left = x * picture.width // width
            right = max(left + 1, (x + 1) * picture.width // width)
            r = g = b = a = count = 0
            for sy in range(top, bottom):
                base = (sy * picture.width) * 4
                for sx in range(left, right):
                    i = base + sx * 4
                    alpha = source[i + 3]
                    r += source[i] * alpha
                    g += source[i + 1] * alpha
                    b += source[i + 2] * alpha
                    a += alpha
                    count += 1
            start = (y * width + x) * 4
            if a:
                out[start:start + 4] = bytes((r // a, g // a, b // a, a // count))
    return Picture(width, height, bytes(out))


def fit(width: int, height: int, max_width: int, max_height: int) -> tuple[int, int]:
    """The largest size with ``width``:``height``'s proportions within the bounds,
    never larger than the original."""
    scale = min(1.0, max_width / width, max_height / height)
    return max(1, round(width * scale)), max(1, round(height * scale))


def working_copy(picture: Picture) -> Picture:
    """``picture`` shrunk to at most ``WORKING_SIZE``, for cheap resizing later."""
    size = fit(picture.width, picture.height, *WORKING_SIZE)
    return shrink(picture, *size)
