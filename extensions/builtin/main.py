"""The built-in extension's tools: everyday file, text and time helpers.

Each function is ``fn(args, ctx)`` as the Loca format defines; it returns a
JSON-ready value, or raises with a message the model can act on.

The file tools work on the chat's folder (``$project``, which the host names in
``ctx.get_chat_context()["projectFolder"]``): a relative path is taken from there, and
no path leads out of it. Every path is walked one name at a time from a descriptor of
the project's folder, with no link followed by the kernel: ``..`` is taken away by
the name before it, a link is read and its target walked the same way from the
project's folder, and one that leads out is refused, so a link or a name swapped in
while a call runs reaches nothing else. (The sandbox holds the same line a second
time: a worker is given the granted folder and nothing of the rest.)
"""

from __future__ import annotations

import datetime as _dt
import difflib
import os
import stat
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

DEFAULT_MAX_BYTES = 256 * 1024
MAX_EDIT_BYTES = 256 * 1024
"""The largest file ``edit_file`` and ``write_file`` change (its text and the change
travel in the diff bubble, which the result bound counts)."""
MAX_LINKS = 40
_PATH_FLAGS = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC


class OutsideProject(PermissionError):
    """A path that leads out of the project's folder."""


class Rejected(Exception):
    """A change the person did not accept."""


def _project(ctx) -> str:
    chat = ctx.get_chat_context() or {}
    folder = chat.get("projectFolder")
    if not folder:
        raise PermissionError("this chat has no project folder the file tools may use; "
                              "start workbench in the project's folder")
    return os.path.normpath(folder)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _how_to_grant(tool: str, target: str, kinds: tuple[str, ...]) -> str:
    folder = target if kinds == ("read",) and tool in ("list_folder", "find_files",
                                                       "search_text") else os.path.dirname(target)
    flags = " ".join(f"--grant {kind}:{folder}" for kind in kinds)
    return (f"To work there, start workbench in that folder (cd {folder} && workbench) and "
            f"allow the prompt, or run from it `workbench call {tool} … {flags}` or "
            f"`workbench run … {flags}`")


class _Walk:
    """Paths taken beneath the project's folder (see the module docstring)."""

    def __init__(self, ctx, tool: str, kinds: tuple[str, ...] = ("read",)) -> None:
        self.root = _project(ctx)
        self.tool = tool
        self.kinds = kinds

    def absolute(self, raw: str) -> str:
        """``raw`` as an absolute path, ``..`` taken away by name; refused outside."""
        if not isinstance(raw, str) or not raw or "\x00" in raw:
            raise ValueError("give a path: a file or folder of this project, relative to it")
        path = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(self.root, raw))
        self._check(raw, path)
        return path

    def _check(self, raw: str, path: str, via: str | None = None) -> None:
        if _within(path, self.root):
            return
        how = f" (through the link {via})" if via else ""
        raise OutsideProject(
            f"{raw} is outside this project ({self.root}){how}: it leads to {path}, and "
            f"{self.tool} was granted this project's folder alone. "
            + _how_to_grant(self.tool, path, self.kinds))

    def relative(self, path: str) -> str:
        return os.path.relpath(path, self.root)

    def locate(self, raw: str, *, make_folders: bool = False) -> tuple[int, str, str]:
        """The folder descriptor and the name of what ``raw`` names (links inside the
        project followed by name, never by the kernel), and its absolute path. The
        caller closes the descriptor. The named entry itself may not exist.

        Raises:
            OutsideProject: The path, or a link on it, leads out of the project.
            NotADirectoryError: A name on the way is not a folder.
        """
        path = self.absolute(raw)
        links = 0
        while True:
            names = [p for p in path[len(self.root):].split("/") if p]
            folder = os.open(self.root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            walked = self.root
            try:
                for index, name in enumerate(names):
                    last = index == len(names) - 1
                    try:
                        entry = os.open(name, _PATH_FLAGS, dir_fd=folder)
                    except FileNotFoundError:
                        if last:
                            return folder, name, path
                        if not make_folders:
                            raise FileNotFoundError(f"{raw}: there is no {os.path.join(walked, name)}") from None
                        os.mkdir(name, 0o755, dir_fd=folder)
                        entry = os.open(name, _PATH_FLAGS, dir_fd=folder)
                    info = os.fstat(entry)
                    if stat.S_ISLNK(info.st_mode):
                        os.close(entry)
                        links += 1
                        if links > MAX_LINKS:
                            raise OSError(f"{raw}: too many links")
                        target = os.readlink(name, dir_fd=folder)
                        rest = names[index + 1:]
                        path = os.path.normpath(os.path.join(walked, target, *rest))
                        self._check(raw, os.path.normpath(os.path.join(walked, target)),
                                    via=os.path.join(walked, name))
                        self._check(raw, path, via=os.path.join(walked, name))
                        break
                    if last:
                        os.close(entry)
                        return folder, name, path
                    if not stat.S_ISDIR(info.st_mode):
                        os.close(entry)
                        raise NotADirectoryError(f"{raw}: {os.path.join(walked, name)} is not a folder")
                    os.close(folder)
                    folder = entry
                    walked = os.path.join(walked, name)
                else:
                    return folder, ".", path  # the project's folder itself
            except BaseException:
                os.close(folder)
                raise
            os.close(folder)

    def open(self, raw: str, flags: int = os.O_RDONLY) -> tuple[int, str]:
        """An open descriptor of the file or folder ``raw`` names, and its path."""
        folder, name, path = self.locate(raw)
        try:
            try:
                return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder), path
            except FileNotFoundError:
                raise FileNotFoundError(f"there is no {self.relative(path)} in this project "
                                        f"({self.root})") from None
            except OSError as exc:
                if exc.errno == 40:  # ELOOP: a link swapped in after the walk
                    raise OSError(f"{raw} changed while it was opened; nothing was read") from None
                raise
        finally:
            os.close(folder)

    def read_text(self, raw: str, limit: int) -> tuple[str | None, bytes, int]:
        """The path, the first ``limit + 1`` bytes and the size of the file ``raw``
        names; None for the path when there is no such file."""
        try:
            fd, path = self.open(raw)
        except FileNotFoundError:
            return None, b"", 0
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(f"{self.relative(path)} is a folder; use list_folder")
            if not stat.S_ISREG(info.st_mode):
                raise OSError(f"{self.relative(path)} is not a regular file")
            return path, handle.read(limit + 1), info.st_size

    def write(self, raw: str, data: bytes) -> str:
        """Write ``data`` to the file ``raw`` names, replacing it as one step (a new
        file beside it, renamed over it), making its folders; returns its path."""
        folder, name, path = self.locate(raw, make_folders=True)
        try:
            if name == ".":
                raise IsADirectoryError(f"{raw} is this project's folder, not a file")
            mode = 0o644
            try:
                info = os.stat(name, dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                pass
            else:
                if not stat.S_ISREG(info.st_mode):
                    raise IsADirectoryError(f"{self.relative(path)} is not a file")
                mode = stat.S_IMODE(info.st_mode)
            temporary = f".{name}.workbench-{os.getpid()}"
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, mode, dir_fd=folder)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.rename(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                try:
                    os.unlink(temporary, dir_fd=folder)
                except OSError:
                    pass
                raise
            return path
        finally:
            os.close(folder)


def read_file(args, ctx):
    """Return a text file of this project, cut at ``max_bytes`` and saying so."""
    walk = _Walk(ctx, "read_file")
    limit = int(args.get("max_bytes") or DEFAULT_MAX_BYTES)
    path, data, size = walk.read_text(args["path"], limit)
    if path is None:
        raise FileNotFoundError(f"there is no {args['path']} in this project ({walk.root})")
    truncated = len(data) > limit
    text = data[:limit].decode("utf-8", errors="replace")
    ctx.set_progress(1)
    return {"path": path, "content": text, "truncated": truncated, "bytes": size}


def _kind(info: os.stat_result) -> str:
    if stat.S_ISLNK(info.st_mode):
        return "link"
    if stat.S_ISDIR(info.st_mode):
        return "folder"
    if stat.S_ISREG(info.st_mode):
        return "file"
    return "other"


def list_folder(args, ctx):
    """Return a folder's entries: name, kind (file, folder, link, other) and size."""
    walk = _Walk(ctx, "list_folder")
    fd, path = walk.open(args.get("path") or ".", os.O_RDONLY | os.O_DIRECTORY)
    hidden = bool(args.get("include_hidden"))
    entries = []
    try:
        with os.scandir(fd) as scan:
            for entry in scan:
                if entry.name.startswith(".") and not hidden:
                    continue
                kind = _kind(entry.stat(follow_symlinks=False))
                entries.append({"name": entry.name, "kind": kind,
                                "size": entry.stat(follow_symlinks=False).st_size
                                if kind == "file" else None})
    finally:
        os.close(fd)
    entries.sort(key=lambda e: (e["kind"] != "folder", e["name"].lower()))
    ctx.set_progress(1)
    return {"path": path, "entries": entries}


def _files(walk: _Walk, raw: str, ctx):
    """``(path, folder descriptor, name)`` of each regular file under ``raw`` (no
    hidden name, no link followed), in order."""
    fd, top = walk.open(raw or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        for folder, dirs, files, dir_fd in os.fwalk(".", dir_fd=fd, follow_symlinks=False):
            if ctx.signal.aborted:
                return
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if name.startswith("."):
                    continue
                try:
                    info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode):
                    yield os.path.normpath(os.path.join(top, folder, name)), dir_fd, name
    finally:
        os.close(fd)
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


def _review(ctx, walk: _Walk, path: str, before: str, after: str) -> None:
    """Ask the person to accept the change, when they asked for review
    (``reviewWrites``); refuse it unless accepted."""
    if not (ctx.get_chat_context() or {}).get("reviewWrites"):
        return
    shown = walk.relative(path)
    try:
        [verdict] = ctx.ask_user([{"kind": "diff", "question": f"Write this change to {shown}?",
                                   "before": before, "after": after, "title": shown}])
    except Exception as exc:  # the form was not answered (no one there, or refused)
        raise Rejected(f"the change to {shown} is to be reviewed first, and it was not "
                       f"accepted ({exc}); nothing was written. Headless, accept it with "
                       "--answers FILE holding [[\"accept\"]] or a delegate, or set "
                       "tools.review_writes to never") from None
    if verdict != "accept":
        raise Rejected(f"the change to {shown} was rejected; nothing was written")


def _change(ctx, walk: _Walk, raw: str, before: str | None, after: str) -> dict:
    """Write ``after`` to the file ``raw`` names once reviewed, if it still holds
    ``before`` (None: it must still be missing); show it as a diff bubble."""
    data = after.encode("utf-8")
    if len(data) > MAX_EDIT_BYTES:
        raise ValueError(f"the new text is {len(data)} bytes; the file tools write at most "
                         f"{MAX_EDIT_BYTES}")
    path = walk.absolute(raw)
    _review(ctx, walk, path, before or "", after)
    now, old, _size = walk.read_text(raw, MAX_EDIT_BYTES)
    if (before is None) != (now is None) or (before is not None and old.decode("utf-8", "replace") != before):
        raise OSError(f"{walk.relative(path)} changed while the change was being made; "
                      "nothing was written: read it again")
    path = walk.write(raw, data)
    shown = walk.relative(path)
    ctx.display.diff(before or "", after, shown)
    ctx.set_progress(1)
    diff = "".join(difflib.unified_diff((before or "").splitlines(True), after.splitlines(True),
                                        f"a/{shown}", f"b/{shown}"))
    return {"path": path, "bytes": len(data), "created": before is None, "diff": diff}


def _current(walk: _Walk, raw: str) -> str | None:
    path, data, size = walk.read_text(raw, MAX_EDIT_BYTES)
    if path is None:
        return None
    if size > MAX_EDIT_BYTES:
        raise ValueError(f"{walk.relative(path)} is {size} bytes; the file tools change files of "
                         f"at most {MAX_EDIT_BYTES}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{walk.relative(path)} is not UTF-8 text; it is left as it is") from None


def write_file(args, ctx):
    """Write text to a file of this project, creating its folder; refuses to overwrite
    unless asked."""
    walk = _Walk(ctx, "write_file", ("write", "read"))
    before = _current(walk, args["path"])
    if before is not None and not args.get("overwrite"):
        raise FileExistsError(f"{args['path']} exists; pass overwrite: true to replace it")
    return _change(ctx, walk, args["path"], before, args["content"])


def edit_file(args, ctx):
    """Change a file of this project: replace ``old_text`` with ``new_text`` exactly
    ``expected_count`` times (1 by default), or write ``content`` as the whole file."""
    walk = _Walk(ctx, "edit_file", ("write", "read"))
    raw = args["path"]
    before = _current(walk, raw)
    if "content" in args:
        if "old_text" in args or "new_text" in args:
            raise ValueError("give either content (the whole file) or old_text and new_text")
        return _change(ctx, walk, raw, before, args["content"])
    if "old_text" not in args or "new_text" not in args:
        raise ValueError("give old_text and new_text (or content, for the whole file)")
    old, new = args["old_text"], args["new_text"]
    expected = int(args.get("expected_count") or 1)
    if before is None:
        raise FileNotFoundError(f"there is no {raw} in this project ({walk.root}); to make it, "
                                "give content instead of old_text")
    if not old:
        raise ValueError("old_text is empty; give the exact text to replace")
    found = before.count(old)
    if found == 0:
        raise ValueError(f"old_text was not found in {raw}; nothing was changed (read the file "
                         "again and copy the text exactly, spaces and line ends included)")
    if found != expected:
        raise ValueError(f"old_text is found {found} times in {raw}, not {expected} as "
                         "expected_count says; nothing was changed (give more of the text "
                         "around it to make it unique, or set expected_count to "
                         f"{found} to change every one)")
    result = _change(ctx, walk, raw, before, before.replace(old, new))
    return {**result, "replaced": found}


def find_files(args, ctx):
    """Files under a folder of this project whose names match a glob pattern (at most
    ``limit``)."""
    import fnmatch

    walk = _Walk(ctx, "find_files")
    limit = int(args.get("limit") or 200)
    pattern = args.get("pattern") or "*"
    found = []
    truncated = False
    for path, _dir_fd, name in _files(walk, args.get("path") or ".", ctx):
        if fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(walk.relative(path), pattern):
            if len(found) >= limit:
                truncated = True
                break
            found.append(path)
    ctx.set_progress(1)
    return {"root": walk.absolute(args.get("path") or "."), "files": found, "truncated": truncated}


def search_text(args, ctx):
    """Lines containing a text (or a regular expression) in the files under a folder
    of this project."""
    import re

    walk = _Walk(ctx, "search_text")
    flags = 0 if args.get("case_sensitive") else re.IGNORECASE
    pattern = re.compile(args["query"] if args.get("regex") else re.escape(args["query"]), flags)
    limit = int(args.get("limit") or 100)
    hits = []
    for path, dir_fd, name in _files(walk, args.get("path") or ".", ctx):
        ctx.set_progress(0.5, "searching", name)
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        except OSError:
            continue
        try:
            with open(fd, encoding="utf-8", errors="strict") as handle:
                for number, line in enumerate(handle, 1):
                    if pattern.search(line):
                        hits.append({"path": path, "line": number, "text": line.rstrip()[:300]})
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
