"""Semantic versions and npm's range syntax, enough to pick a package version.

Supported: exact versions (``1.2.3``, ``v1.2.3``, ``=1.2.3``), comparators (``>=``,
``>``, ``<=``, ``<``), caret (``^1.2``), tilde (``~1.2.3``), X-ranges (``1.x``, ``1``,
``*``), hyphen ranges (``1.2 - 2.3.4``), whitespace for "and" and ``||`` for "or".
As in npm, a prerelease (``2.0.0-beta.1``) satisfies a range only when one of its
comparators names a prerelease of the same major.minor.patch.

This module imports nothing of ours.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_VERSION = re.compile(
    r"^[v=]?\s*(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z.-]+)?$")
_PARTIAL = re.compile(
    r"^[v=]?\s*([xX*]|0|[1-9]\d*)(?:\.([xX*]|0|[1-9]\d*)(?:\.([xX*]|0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z.-]+)?)?)?$")
_COMPARATOR = re.compile(r"^(>=|<=|>|<|=|\^|~>?)?\s*(.*)$")


@dataclass(frozen=True, order=False)
class Version:
    """A parsed semantic version; compare with :meth:`key`."""

    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...] = ()

    def key(self) -> tuple:
        """A sort key: releases after their prereleases, numeric ids before words."""
        if not self.prerelease:
            return (self.major, self.minor, self.patch, (1,))
        ids = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.prerelease)
        return (self.major, self.minor, self.patch, (0, ids))

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        return text + ("-" + ".".join(self.prerelease) if self.prerelease else "")


def parse_version(text: str) -> Version | None:
    """Parse an exact version, or return None when ``text`` is not one."""
    match = _VERSION.match(text.strip())
    if not match:
        return None
    pre = tuple(match.group(4).split(".")) if match.group(4) else ()
    return Version(int(match.group(1)), int(match.group(2)), int(match.group(3)), pre)


_Comparator = tuple[str, Version]  # operator in (">=", ">", "<=", "<", "=") and a version


def _floor(major: int, minor: int = 0, patch: int = 0) -> Version:
    """The lowest version at this point, below every prerelease of it (``X.Y.Z-0``)."""
    return Version(major, minor, patch, ("0",))


def _partial(text: str) -> tuple[list[int | None], tuple[str, ...]]:
    match = _PARTIAL.match(text.strip())
    if not match:
        raise ValueError(f"{text!r} is not a version")
    numbers: list[int | None] = []
    for group in match.groups()[:3]:
        numbers.append(None if group is None or group in ("x", "X", "*") else int(group))
    # Anything after a wildcard is a wildcard too: 1.x.3 means 1.x.
    for index, value in enumerate(numbers):
        if value is None:
            numbers[index + 1:] = [None] * (2 - index)
            break
    pre = tuple(match.group(4).split(".")) if match.group(4) and numbers[2] is not None else ()
    return numbers, pre


def _desugar(op: str, text: str) -> list[_Comparator]:
    if text in ("", "*", "x", "X"):
        return [] if op in ("", "=", ">=", "<=", "^", "~", "~>") else [("<", _floor(0))]
    (major, minor, patch), pre = _partial(text)
    if op in ("~", "~>"):
        if major is None:
            return []
        low = Version(major, minor or 0, patch or 0, pre)
        high = _floor(major + 1) if minor is None else _floor(major, minor + 1)
        return [(">=", low), ("<", high)]
    if op == "^":
        if major is None:
            return []
        low = Version(major, minor or 0, patch or 0, pre)
        if major > 0 or minor is None:
            high = _floor(major + 1)
        elif minor > 0 or patch is None:
            high = _floor(0, minor + 1)
        else:
            high = _floor(0, 0, patch + 1)
        return [(">=", low), ("<", high)]
    if major is None:
        return [("<", _floor(0))] if op in ("<", ">") else []
    if minor is None or patch is None:
        low = _floor(major, minor or 0)
        high = _floor(major + 1) if minor is None else _floor(major, minor + 1)
        return {"": [(">=", low), ("<", high)], "=": [(">=", low), ("<", high)],
                ">=": [(">=", low)], ">": [(">=", high)],
                "<": [("<", low)], "<=": [("<", high)]}[op]
    return [(op or "=", Version(major, minor, patch, pre))]


def _compare(op: str, version: Version, bound: Version) -> bool:
    a, b = version.key(), bound.key()
    return {"=": a == b, ">=": a >= b, ">": a > b, "<=": a <= b, "<": a < b}[op]


class Range:
    """An npm version range: sets of comparators joined by ``||``.

    Raises:
        ValueError: From the constructor, when the text is not a range.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.sets: list[list[_Comparator]] = []
        for alternative in text.split("||"):
            alternative = alternative.strip()
            hyphen = re.match(r"^(\S+)\s+-\s+(\S+)$", alternative)
            comparators: list[_Comparator] = []
            if hyphen:
                comparators += _desugar(">=", hyphen.group(1))
                comparators += _desugar("<=", hyphen.group(2))
            else:
                # Glue operators to their version: ">= 1.2" is one comparator.
                tokens = re.sub(r"(>=|<=|>|<|=|\^|~>?)\s+", r"\1", alternative).split()
                for token in tokens or [""]:
                    match = _COMPARATOR.match(token)
                    assert match is not None  # the pattern matches any text
                    comparators += _desugar(match.group(1) or "", match.group(2))
            self.sets.append(comparators)

    def _allows_prerelease_of(self, version: Version, comparators: list[_Comparator]) -> bool:
        return any(bound.prerelease and bound.prerelease != ("0",)
                   and (bound.major, bound.minor, bound.patch)
                   == (version.major, version.minor, version.patch)
                   for _, bound in comparators)

    def contains(self, version: Version) -> bool:
        """Whether ``version`` satisfies the range."""
        for comparators in self.sets:
            if not all(_compare(op, version, bound) for op, bound in comparators):
                continue
            if version.prerelease and not self._allows_prerelease_of(version, comparators):
                continue
            return True
        return False


def max_satisfying(versions: Iterable[str], spec: str) -> str | None:
    """The highest of ``versions`` that satisfies the range ``spec``.

    Args:
        versions: Version strings; the ones that do not parse are skipped.
        spec: An npm range.

    Returns:
        The chosen version string as given, or None when none satisfies.

    Raises:
        ValueError: ``spec`` is not a range.
    """
    wanted = Range(spec)
    best: tuple[tuple, str] | None = None
    for text in versions:
        parsed = parse_version(text)
        if parsed is None or not wanted.contains(parsed):
            continue
        if best is None or parsed.key() > best[0]:
            best = (parsed.key(), text)
    return None if best is None else best[1]
