"""A Markdown file's front matter, read as the Agent Skills format defines it: YAML.

A ``SKILL.md`` opens with a ``---`` line, a YAML mapping (``name``, ``description``,
optional ``license``, ``allowed-tools``, ``metadata`` and any other keys), and a
closing ``---`` (or ``...``) line. The mapping is read with PyYAML's ``safe_load``,
so every form YAML allows means what it means there: quoted scalars with their
escapes, folded (``>``, ``>-``) and literal (``|``, ``|-``, ``|+``) block scalars,
multi-line plain scalars, comments. A leading byte order mark and CRLF line ends are
taken as an author's editor writes them.

``parse_front_matter`` is the one reader; the manifest checks, the install plan and
the memories all use it, so a skill's description is the same wherever it is shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_FRONT_MATTER = 64 * 1024
"""The most characters a front matter block may hold."""

_CLOSERS = ("---", "...")


class FrontMatterError(ValueError):
    """Front matter that opens but is not a YAML mapping; ``str()`` says what and where
    (``line N``, counted in the whole file)."""


@dataclass(frozen=True)
class FrontMatter:
    """What a Markdown file's front matter holds.

    Attributes:
        data: The mapping (empty when there is none).
        body: The text after the front matter (the whole text when there is none).
        present: Whether the file has front matter at all.
    """

    data: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    present: bool = False

    def text(self, key: str) -> str | None:
        """The value of ``key`` as text: a string as written, a number or date as YAML
        wrote it; None when it is missing, empty or not a scalar."""
        value = self.data.get(key)
        if value is None or isinstance(value, (dict, list, bool)):
            return None
        text = value if isinstance(value, str) else str(value)
        return text if text.strip() else None


def normalized(text: str) -> str:
    """``text`` without a leading byte order mark, with ``\\n`` line ends."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_front_matter(text: str) -> FrontMatter:
    """Read the front matter of ``text`` (see the module docstring).

    Returns:
        The front matter; ``present`` is False when the text does not open with ``---``.

    Raises:
        FrontMatterError: It opens with ``---`` but never closes, is too long, is not
            valid YAML, or is YAML but not a mapping.
    """
    text = normalized(text)
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return FrontMatter(body=text)
    end = next((i for i, line in enumerate(lines[1:], 1) if line.rstrip() in _CLOSERS), None)
    if end is None:
        raise FrontMatterError("the front matter opened on line 1 has no closing '---' line")
    block = "".join(line + "\n" for line in lines[1:end])
    if len(block) > MAX_FRONT_MATTER:
        raise FrontMatterError(f"the front matter is longer than {MAX_FRONT_MATTER} characters")
    import yaml  # here: a start that reads no front matter (the TUI's first frame) skips it

    try:
        data = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"line {mark.line + 2}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FrontMatterError(f"the front matter is not valid YAML: {where}{problem}") from None
    except RecursionError:
        raise FrontMatterError("the front matter is nested too deeply to read") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontMatterError("the front matter must be a mapping of keys (name: …, "
                               f"description: …), not a {_kind(data)}")
    data = {str(key): value for key, value in data.items()}
    return FrontMatter(data=data, body="\n".join(lines[end + 1:]), present=True)


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "line of text"
    return type(value).__name__
