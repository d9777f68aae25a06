"""``workbench.text``: every control, escape and bidi override made inert, JSON kept exact."""

from __future__ import annotations

import io
import json

import pytest

from workbench.text import SafeStream, strip, visible

SEQUENCES = ["\x1b]0;title\x07", "\x1b]52;c;aGk=\x1b\\", "\x1b[2J\x1b[H", "\x1bPq#0\x1b\\",
             "\x1b_G a=T\x1b\\", "\x1b^pm\x1b\\", "\x1bXsos\x1b\\", "\x9b2J", "\x9d0;t\x9c",
             "\x08\x08", "\x00", "\x7f", "\u202e", "\u202a", "\u2066", "\u2069", "\ud800"]


@pytest.mark.parametrize("sequence", SEQUENCES)
def test_nothing_a_terminal_obeys_is_left(sequence):
    for made in (visible(f"a{sequence}b"), strip(f"a{sequence}b")):
        assert not any(ord(c) < 0x20 and c not in "\n\t" for c in made)
        assert not any(0x7F <= ord(c) <= 0x9F for c in made)
        assert not any(c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069" for c in made)
        made.encode("utf-8")  # no lone surrogate either
        assert made.startswith("a") and made.endswith("b")


def test_visible_shows_each_as_its_escape_and_keeps_layout_characters():
    assert visible("a\x1b]0;t\x07b") == "a\\u001b]0;t\\u0007b"
    assert visible("x\u202ey") == "x\\u202ey"
    assert visible("one\r\ntwo\tthree") == "one\ntwo\tthree"
    assert visible("over\rwrite") == "overwrite"
    assert visible("one\ntwo", one_line=True) == "one\\u000atwo"
    assert visible("plain words") == "plain words"


def test_strip_removes_them_and_keeps_the_cells():
    assert strip("a\x1b[2Jb\u202ec\x9bd") == "a[2Jbcd"
    assert strip("a\ud800b") == "a\ufffdb"


@pytest.mark.parametrize("ensure_ascii", [True, False])
def test_json_written_through_it_is_the_same_value(ensure_ascii):
    value = {"text": "".join(SEQUENCES) + "ok", "nested": ["\x85", "\u2067"]}
    out = io.StringIO()
    SafeStream(out).write(json.dumps(value, ensure_ascii=ensure_ascii) + "\n")
    line = out.getvalue()
    assert json.loads(line) == value
    assert all(c in "\n" or 0x20 <= ord(c) < 0x7F or ord(c) > 0x9F for c in line)
    assert not any(c in "\u202a\u202e\u2066\u2069" for c in line)
