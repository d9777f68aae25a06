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


MAX_FETCH_BYTES = 512 * 1024


def write_file(args, ctx):
    """Write text to a file, creating its folder; refuses to overwrite unless asked."""
    path = _path(args["path"])
    if path.exists() and not args.get("overwrite"):
        raise FileExistsError(f"{path} exists; pass overwrite: true to replace it")
    path.parent.mkdir(parents=True, exist_ok=True)
    data = args["content"].encode("utf-8")
    path.write_bytes(data)
    ctx.set_progress(1)
    return {"path": str(path), "bytes": len(data)}


def find_files(args, ctx):
    """Files under a folder whose names match a glob pattern (at most ``limit``)."""
    root = _path(args["path"])
    limit = int(args.get("limit") or 200)
    found = []
    for match in sorted(root.rglob(args.get("pattern") or "*")):
        if any(part.startswith(".") for part in match.relative_to(root).parts):
            continue
        if match.is_file():
            found.append(str(match))
            if len(found) >= limit:
                break
    ctx.set_progress(1)
    return {"root": str(root), "files": found, "truncated": len(found) >= limit}


def search_text(args, ctx):
    """Lines containing a text (or a regular expression) in the files under a folder."""
    import re

    root = _path(args["path"])
    flags = 0 if args.get("case_sensitive") else re.IGNORECASE
    pattern = re.compile(args["query"] if args.get("regex") else re.escape(args["query"]), flags)
    limit = int(args.get("limit") or 100)
    hits = []
    files = [p for p in sorted(root.rglob("*")) if p.is_file()
             and not any(part.startswith(".") for part in p.relative_to(root).parts)]
    for index, file in enumerate(files):
        if ctx.signal.aborted:
            break
        ctx.set_progress(index / max(1, len(files)), "searching", file.name)
        try:
            with open(file, encoding="utf-8", errors="strict") as handle:
                for number, line in enumerate(handle, 1):
                    if pattern.search(line):
                        hits.append({"path": str(file), "line": number, "text": line.rstrip()[:300]})
                        if len(hits) >= limit:
                            ctx.set_progress(1)
                            return {"matches": hits, "truncated": True}
        except (UnicodeDecodeError, OSError):
            continue
    ctx.set_progress(1)
    return {"matches": hits, "truncated": False}


def fetch_url(args, ctx):
    """Fetch a web page (http or https) and return its text, cut at a bound and saying so."""
    import urllib.request
    from urllib.parse import urlsplit

    url = args["url"]
    if urlsplit(url).scheme not in ("http", "https"):
        raise ValueError("only http and https URLs can be fetched")
    request = urllib.request.Request(url, headers={"User-Agent": "workbench-fetch/1"})
    ctx.set_progress(0.1, "connecting")
    with urllib.request.urlopen(request, timeout=30) as response:
        data = response.read(MAX_FETCH_BYTES + 1)
        charset = response.headers.get_content_charset() or "utf-8"
        result = {"url": response.geturl(), "status": response.status,
                  "content_type": response.headers.get("Content-Type"),
                  "text": data[:MAX_FETCH_BYTES].decode(charset, errors="replace"),
                  "truncated": len(data) > MAX_FETCH_BYTES}
    ctx.set_progress(1)
    return result


def calculate(args, ctx):
    """Evaluate an arithmetic expression safely (numbers, + - * / // % **, parentheses)."""
    import ast
    import operator

    operators = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                 ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
                 ast.Pow: operator.pow, ast.USub: operator.neg, ast.UAdd: operator.pos}

    def value(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in operators:
            left, right = value(node.left), value(node.right)
            if isinstance(node.op, ast.Pow) and abs(right) > 1000:
                raise ValueError("exponent too large")
            return operators[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp) and type(node.op) in operators:
            return operators[type(node.op)](value(node.operand))
        raise ValueError("only numbers and + - * / // % ** ( ) are allowed")

    expression = args["expression"]
    if len(expression) > 1000:
        raise ValueError("the expression is too long")
    return {"expression": expression, "value": value(ast.parse(expression, mode="eval").body)}
