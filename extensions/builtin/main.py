"""The built-in extension's tools: everyday file, text and time helpers.

Each function is ``fn(args, ctx)`` as the Loca format defines; it returns a
JSON-ready value, or raises with a message the model can act on.
"""

from __future__ import annotations

import datetime as _dt
import os
import stat
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

DEFAULT_MAX_BYTES = 256 * 1024


def _path(raw: str) -> Path:
    return Path(os.path.expanduser(raw))


def read_file(args, ctx):
    """Return a text file's contents, cut at ``max_bytes`` and saying so."""
    path = _path(args["path"])
    limit = int(args.get("max_bytes") or DEFAULT_MAX_BYTES)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder; use list_folder")
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    truncated = len(data) > limit
    text = data[:limit].decode("utf-8", errors="replace")
    ctx.set_progress(1)
    return {"path": str(path), "content": text, "truncated": truncated,
            "bytes": path.stat().st_size}


def list_folder(args, ctx):
    """Return a folder's entries: name, kind (file, folder, link, other) and size."""
    path = _path(args["path"])
    hidden = bool(args.get("include_hidden"))
    entries = []
    with os.scandir(path) as scan:
        for entry in scan:
            if entry.name.startswith(".") and not hidden:
                continue
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                kind = "link"
            elif stat.S_ISDIR(info.st_mode):
                kind = "folder"
            elif stat.S_ISREG(info.st_mode):
                kind = "file"
            else:
                kind = "other"
            entries.append({"name": entry.name, "kind": kind,
                            "size": info.st_size if kind == "file" else None})
    entries.sort(key=lambda e: (e["kind"] != "folder", e["name"].lower()))
    ctx.set_progress(1)
    return {"path": str(path), "entries": entries}


def word_count(args, ctx):
    """Count words, lines and characters."""
    text = args["text"]
    ctx.set_progress(1)
    return {"words": len(text.split()), "lines": len(text.splitlines()),
            "characters": len(text)}


def current_time(args, ctx):
    """The current date and time, ISO 8601, with the zone's name and weekday."""
    name = args.get("timezone")
    if name:
        try:
            zone = ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {name!r}") from exc
        now = _dt.datetime.now(zone)
    else:
        now = _dt.datetime.now().astimezone()
    return {"iso": now.isoformat(timespec="seconds"), "timezone": name or now.tzname(),
            "weekday": now.strftime("%A"), "unix": int(now.timestamp())}
