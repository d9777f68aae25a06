"""Reading and writing one TOML config file: parsing, checking, comment-keeping writes.

A file that cannot be parsed is reported with its path, line and column and is
never rewritten. Writes go through tomlkit, so comments and layout survive, and
are atomic: a temporary file in the same folder, fsync, then ``os.replace``.

This module owns the file format; it must not import the trust record or ``Config``
(``files.py``), which are built on it.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.container import Container
from tomlkit.exceptions import ParseError
from tomlkit.items import Table
from tomlkit.toml_document import TOMLDocument

from workbench.config.settings import (FREE_TABLES, SETTINGS, TABLES, describe, unknown_key_message,
                                       validate)
from workbench.errors import ConfigError

def read_text(path: Path) -> str:
    """The text of a config file.

    Raises:
        ConfigError: When the file cannot be read or is not UTF-8.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read config file: {exc.strerror or exc}",
                          where=str(path)) from None
    return decode(data, str(path))


def decode(data: bytes, source: str) -> str:
    """Config bytes as text; TOML files are UTF-8, a byte-order mark before them is passed over
    (editors on some systems write one).

    Raises:
        ConfigError: When the bytes are not UTF-8, naming ``source``.
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError("config file is not UTF-8 text", where=f"{source}:{line}") from None


def parse(text: str, source: str) -> TOMLDocument:
    """Parse TOML text, reporting errors with the file, line and column.

    Args:
        text: The TOML text.
        source: The file it came from, for messages.

    Returns:
        The tomlkit document (comments and layout kept).

    Raises:
        ConfigError: When the text is not valid TOML; ``where`` is ``path:line:column``.
    """
    try:
        return tomlkit.parse(text)
    except ParseError as exc:
        reason = str(exc).rsplit(f" at line {exc.line} col {exc.col}", 1)[0]
        # tomlkit reports the end of the text as the character NUL.
        reason = reason.replace("Unexpected character: '\\x00'", "unexpected end of file")
        # tomlkit counts columns from 0; editors and compilers count from 1.
        raise ConfigError(f"invalid TOML: {reason}",
                          where=f"{source}:{exc.line}:{exc.col + 1}") from None


def values_from_text(text: str, source: str) -> dict[str, Any]:
    """Parse and check a config file's text.

    Args:
        text: The TOML text.
        source: The file it came from, for messages.

    Returns:
        The settings it sets, by dotted key, checked and normalized.

    Raises:
        ConfigError: On invalid TOML, an unknown key or a value of the wrong type;
            the message names the file, the key and, when found, the line.
    """
    document = parse(text, source)
    values: dict[str, Any] = {}
    _collect(document.unwrap(), "", values, text, source)
    return values


def read_values(path: Path) -> dict[str, Any]:
    """Read and check a config file; an absent file sets nothing.

    Raises:
        ConfigError: As ``values_from_text``, or when the file cannot be read.
    """
    if not path.exists():
        return {}
    return values_from_text(read_text(path), str(path))


def _collect(table: dict[str, Any], prefix: str, out: dict[str, Any], text: str,
             source: str) -> None:
    for name, value in table.items():
        key = f"{prefix}{name}"
        where = _where(source, text, key)
        if "." in name:
            raise ConfigError(
                f"quoted key {key!r} holds a dot; write it as a table key instead", where=where)
        if key in SETTINGS:
            out[key] = validate(key, value, where=where)
        elif key in FREE_TABLES:
            if not isinstance(value, dict):
                raise ConfigError(f"{key!r} must be a table, not {describe(value)}", where=where)
        elif key in TABLES:
            if not isinstance(value, dict):
                raise ConfigError(f"{key!r} must be a table of settings, not {describe(value)}",
                                  where=where)
            _collect(value, f"{key}.", out, text, source)
        else:
            raise ConfigError(unknown_key_message(key), where=where)


def _where(source: str, text: str, key: str) -> str:
    line = key_line(text, key)
    return f"{source}:{line}" if line else source


_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")
_ASSIGNMENT = re.compile(r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
                         r"""(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=""")


def _split_key(raw: str) -> list[str]:
    parts = re.findall(r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'""", raw)
    return [part[1:-1] if part[:1] in "\"'" else part for part in parts]


def key_line(text: str, key: str) -> int | None:
    """The line (from 1) where a dotted key is set or its table begins, if found.

    tomlkit keeps no line numbers for items, so this scans the text: table
    headers and ``key =`` lines, outside multi-line strings. It is a pointer for
    people reading an error, not a parser.

    Args:
        text: The TOML text.
        key: A dotted key, e.g. ``tools.timeout_ms``.

    Returns:
        The 1-based line number, or None when the key is not found.
    """
    wanted = key.split(".")
    table: list[str] = []
    table_line: int | None = None
    in_multiline: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if in_multiline:
            if line.count(in_multiline) % 2 == 1:
                in_multiline = None
            continue
        header = _HEADER.match(line)
        if header and not line.lstrip().startswith("[["):
            table = _split_key(header.group(1))
            if table == wanted:
                table_line = number
            continue
        assignment = _ASSIGNMENT.match(line)
        if assignment:
            if table + _split_key(assignment.group(1)) == wanted:
                return number
            for quote in ('"""', "'''"):
                if line.count(quote) % 2 == 1:
                    in_multiline = quote
    return table_line


def write_setting(path: Path, key: str, value: Any) -> None:
    """Set one key in a config file, keeping its comments and layout.

    The file (and its folder) is created when missing. The value must already be
    checked (see ``settings.validate``).

    Args:
        path: The config file.
        key: A known dotted setting key.
        value: The value to write.

    Raises:
        ConfigError: When the file cannot be parsed (it is left as it was) or a
            key on the way is not a table.
    """
    if path.exists():
        text = read_text(path)
        document = parse(text, str(path))
    else:
        document = tomlkit.document()
    container: Container | Table | TOMLDocument = document
    parts = key.split(".")
    for depth, part in enumerate(parts[:-1]):
        if part not in container:
            container[part] = tomlkit.table()
        child = container[part]
        if not isinstance(child, (Table, dict)):
            table = ".".join(parts[: depth + 1])
            raise ConfigError(f"{table!r} is not a table, so {key!r} cannot be set in it",
                              where=str(path))
        container = child
    container[parts[-1]] = value
    atomic_write(path, tomlkit.dumps(document).encode("utf-8"))


def atomic_write(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace a file's content all at once, so a crash leaves the old or the new file.

    The data goes to a temporary file in the same folder, is flushed to disk, then
    renamed over ``path``. A symbolic link is followed, so a linked config file
    keeps its link. An existing file keeps its permission bits.

    Args:
        path: The file to write.
        data: Its new content.
        mode: Permission bits for a new file; ``0o600`` when omitted.

    Raises:
        ConfigError: When the file cannot be written.
    """
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            mode = stat.S_IMODE(target.stat().st_mode)
        fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                         dir=target.parent)
    except OSError as exc:
        raise ConfigError(f"cannot write: {exc.strerror or exc}", where=str(path)) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp_name, 0o600 if mode is None else mode)
        os.replace(temp_name, target)
    except OSError as exc:
        _remove_quietly(temp_name)
        raise ConfigError(f"cannot write: {exc.strerror or exc}", where=str(path)) from None
    except BaseException:
        _remove_quietly(temp_name)
        raise
    _fsync_folder(target.parent)


def _remove_quietly(name: str) -> None:
    try:
        os.unlink(name)
    except OSError:
        pass


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable; not every platform lets a folder be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
