"""SKILL.md front matter written as an attacker would: YAML that tries to run code, to
exhaust the parser or memory, or to pass for something it is not; each is a clear
error (or harmless data), never a traceback or a hang."""

from __future__ import annotations

import pytest

from workbench.capabilities.memories import front_matter
from workbench.manifest.front_matter import MAX_FRONT_MATTER, FrontMatterError, parse_front_matter


@pytest.mark.parametrize("block, error", [
    ("description: !!python/object/apply:os.system ['touch /tmp/owned']",
     "could not determine a constructor for the tag"),
    ("x: " + "[" * 20_000, "nested too deeply"),
    ("x: " + "{a: " * 15_000, "nested too deeply"),
    ("description: " + "a" * (MAX_FRONT_MATTER + 10), f"longer than {MAX_FRONT_MATTER}"),
    ("just text", "must be a mapping"),
], ids=["python-tag", "deep-lists", "deep-maps", "too-long", "not-a-mapping"])
def test_hostile_front_matter_is_a_clear_error(block, error):
    text = f"---\n{block}\n---\n# Body\n"
    with pytest.raises(FrontMatterError, match=error):
        parse_front_matter(text)
    assert front_matter(text) == {}  # the lenient reader shows nothing rather than failing


def test_an_alias_bomb_is_not_expanded_and_its_description_still_reads():
    bomb = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for name, previous in zip("bcdefghi", "abcdefgh"):
        bomb.append(f"{name}: &{name} [{', '.join(['*' + previous] * 9)}]")
    text = "---\n" + "\n".join(bomb) + "\ndescription: Still fine.\n---\n"
    found = parse_front_matter(text)
    assert found.text("description") == "Still fine."
    assert found.text("i") is None  # a list is not text: nothing walks the 9**9 items
