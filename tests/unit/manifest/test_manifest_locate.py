"""Positions of JSON pointers in a manifest's text, and repeated keys."""

from __future__ import annotations

import json

from workbench.manifest.locate import join_pointer, locate
from workbench.manifest.problems import pointer_for

TEXT = """{
  "name": "x",
  "tools": [
    {"name": "a", "parameters": {"type": "object"}},
    {
      "a/b": 1, "c~d": [true, null, -1.5e3]
    }
  ],
  "empty": {}, "list": [], "é": "ü"
}
"""


def test_every_pointer_has_a_position() -> None:
    found = locate(TEXT)
    json.loads(TEXT)
    assert found.positions[""] == (1, 1)
    assert found.positions["/name"] == (2, 3)
    assert found.positions["/tools"] == (3, 3)
    assert found.positions["/tools/0"] == (4, 5)
    assert found.positions["/tools/0/parameters/type"] == (4, 34)
    assert found.positions["/tools/1"] == (5, 5)
    assert found.positions["/tools/1/a~1b"] == (6, 7)
    assert found.positions["/tools/1/c~0d/2"] == (6, 37)
    assert found.positions["/empty"] == (9, 3)
    assert found.positions["/list"] == (9, 16)
    assert found.positions["/é"] == (9, 28)
    assert found.duplicates == []


def test_missing_pointer_falls_back_to_its_parent() -> None:
    found = locate(TEXT)
    assert found.find("/tools/0/function") == found.positions["/tools/0"]
    assert found.find("/nothing/here") == (1, 1)


def test_repeated_keys_are_noted() -> None:
    found = locate('{"a": 1,\n "b": {"c": 1, "c": 2},\n "a": 3}')
    assert found.duplicates == [("/b/c", (2, 16)), ("/a", (3, 2))]


def test_deep_nesting_does_not_crash() -> None:
    text = "[" * 5000 + "]" * 5000
    assert locate(text).positions == {}


def test_pointer_escaping() -> None:
    assert join_pointer("/x", "a/b", "c~d", 3) == "/x/a~1b/c~0d/3"


def test_pointer_for_a_capability_written_as_one_object_or_a_list() -> None:
    one = {"tools": [{"permissions": {"llm": {"reason": ""}}}]}
    listed = {"tools": [{"permissions": {"llm": [{"reason": "a"}, {"reason": ""}]}}]}
    assert pointer_for(("tools", 0, "permissions", "llm", 0, "reason"), one) == \
        "/tools/0/permissions/llm/reason"
    assert pointer_for(("tools", 0, "permissions", "llm", 1, "reason"), listed) == \
        "/tools/0/permissions/llm/1/reason"


def test_pointer_for_drops_the_tag_of_a_union_member() -> None:
    data = {"net": [{"host": "a", "ports": [443, 0]}], "other": [{"host": "b", "ports": "any"}]}
    assert pointer_for(("net", 0, "ports", "list", 1), data) == "/net/0/ports/1"
    assert pointer_for(("other", 0, "ports", "any"), data) == "/other/0/ports"
