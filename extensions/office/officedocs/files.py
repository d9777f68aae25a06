"""Paths inside the project, bounds on documents, and reviewed saves.

Every path is taken from the chat's project folder (``projectFolder``): a relative one
from there, an absolute one only inside it, with links resolved and checked, so none
leads out (the sandbox holds the same line a second time: the worker is granted the
project's folder alone). A document is a zip of XML parts (``.docx``, ``.xlsx``,
``.pptx``) or a PDF; before a library opens one, ``check_package`` refuses a file
too large, a zip whose parts would expand past a bound (a zip bomb) and XML that
declares a document type or entities (entity expansion, outside references).

A save (``save``) shows the change as a diff of the document's text and, when the
chat reviews writes (``reviewWrites``: always in an unattended run), writes only once
the person accepted it; the file is written beside its final name and renamed over
it, and only if it is still what was read. The earlier bytes are kept in the project's
``.workbench/office-undo/`` and the result reports the change with its undo, the
person-only ``restore_document``, so the change list (``u`` on the call's card,
``workbench changes undo``) can put it back; ``restore`` does so only while the
document is still what the change left.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import tempfile
import zipfile

MAX_FILE_BYTES = 64 * 1024 * 1024
"""The largest document read or edited."""
MAX_UNPACKED_BYTES = 256 * 1024 * 1024
"""The most a document's zip parts may expand to, together."""
MAX_XML_BYTES = 48 * 1024 * 1024
"""The most its XML parts may expand to, together (a library holds them in memory as
trees many times that size; the sandbox bounds a worker's memory)."""
MAX_PARTS = 5000
MAX_RATIO = 200
"""A part that expands more than this many times its packed size is refused."""
MAX_PROLOGUE = 1024 * 1024
"""The most of an XML part read before its first element must have begun."""
MAX_TEXT_CHARS = 200_000
"""The most text a read returns (the rest is said to be left out)."""
MAX_DIFF_CHARS = 200_000
UNDO_FOLDER = (".workbench", "office-undo")
"""Where, in the project, the earlier bytes of each changed document are kept for its
undo (``<token>.bak``: no office tool reads or writes that suffix)."""
MAX_KEPT = 100


class Rejected(Exception):
    """A change the person did not accept."""


class DocumentError(ValueError):
    """A document that cannot be read safely or at all."""


def project(ctx) -> str:
    folder = (ctx.get_chat_context() or {}).get("projectFolder")
    if not folder:
        raise PermissionError("this chat has no project folder the office tools may use; "
                              "start workbench in the project's folder")
    return os.path.realpath(folder)


def locate(ctx, raw, suffixes: tuple[str, ...], tool: str) -> tuple[str, str]:
    """The absolute path ``raw`` names inside the project, links resolved, and the path
    relative to the project (as shown to the person).

    Raises:
        PermissionError: It leads out of the project.
        ValueError: No path, or not one of ``suffixes``.
    """
    root = project(ctx)
    if not isinstance(raw, str) or not raw.strip() or "\x00" in raw:
        raise ValueError("give a path: a file of this project, relative to its folder")
    joined = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(root, raw))
    real = os.path.realpath(joined)
    if not (real == root or real.startswith(root + os.sep)):
        raise PermissionError(f"{raw} is outside this project ({root}): {tool} was granted "
                              "this project's folder alone, and nothing was read or written")
    if not real.lower().endswith(suffixes):
        raise ValueError(f"{raw} is not a {' or '.join(suffixes)} file; {tool} works on those")
    return real, os.path.relpath(real, root)


def read_bytes(path: str, shown: str) -> bytes:
    """The file's bytes, refused past ``MAX_FILE_BYTES``, a folder or a special file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        raise FileNotFoundError(f"there is no {shown} in this project") from None
    except IsADirectoryError:
        raise IsADirectoryError(f"{shown} is a folder, not a document") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not (info.st_mode & 0o170000 == 0o100000):
            raise DocumentError(f"{shown} is not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise DocumentError(f"{shown} is {info.st_size} bytes; the office tools open "
                                f"documents of at most {MAX_FILE_BYTES} bytes")
        return handle.read(MAX_FILE_BYTES + 1)


def check_package(data: bytes, shown: str) -> None:
    """Refuse an Office document that is not a zip, would expand past the bounds, or
    holds XML with a document type declaration (where entities are declared)."""
    import io

    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise DocumentError(f"{shown} is not an Office document (not a zip package)") from None
    with archive:
        members = archive.infolist()
        if len(members) > MAX_PARTS:
            raise DocumentError(f"{shown} has {len(members)} parts; at most {MAX_PARTS} are opened")
        total = xml = 0
        for member in members:
            total += member.file_size
            if member.filename.lower().endswith((".xml", ".rels", ".vml")):
                xml += member.file_size
                if xml > MAX_XML_BYTES:
                    raise DocumentError(f"{shown} holds more than {MAX_XML_BYTES} bytes of XML; "
                                        "the office tools open smaller documents")
            if total > MAX_UNPACKED_BYTES:
                raise DocumentError(f"{shown} would expand to more than {MAX_UNPACKED_BYTES} "
                                    "bytes (a zip bomb?); it was not opened")
            if member.file_size > MAX_RATIO * max(member.compress_size, 1024):
                raise DocumentError(f"{shown}: the part {member.filename} expands "
                                    f"{member.file_size} bytes from {member.compress_size} "
                                    "(a zip bomb?); it was not opened")
            if member.filename.lower().endswith((".xml", ".rels", ".vml")):
                with archive.open(member) as part:
                    why = _prologue_refusal(part.read(MAX_PROLOGUE))
                if why:
                    raise DocumentError(f"{shown}: the part {member.filename} {why}; it was "
                                        "not opened")


def _prologue_refusal(head: bytes) -> str | None:
    """Why an XML part's prologue (what comes before its first element) is refused:
    a document type declaration (where entities are declared), or a prologue longer
    than ``MAX_PROLOGUE``; None when it is plain."""
    position = 0
    while True:
        while position < len(head) and head[position:position + 1] in b" \t\r\n\xef\xbb\xbf":
            position += 1
        if position >= len(head):
            # All prologue so far: refused if the part goes on past what was read.
            return (f"has a prologue longer than {MAX_PROLOGUE} bytes before its first "
                    "element") if len(head) >= MAX_PROLOGUE else None
        if head.startswith(b"<?", position):
            closing = b"?>"
        elif head.startswith(b"<!--", position):
            closing = b"-->"
        elif head.startswith(b"<!", position):
            return "declares a document type or entities, which Office documents never need"
        else:
            return None  # the first element: the prologue is plain
        end = head.find(closing, position)
        if end < 0:
            if len(head) < MAX_PROLOGUE:
                return "is not well-formed XML (a declaration or comment is never closed)"
            return f"has a prologue longer than {MAX_PROLOGUE} bytes before its first element"
        position = end + len(closing)


def unpacked_size(data: bytes) -> int:
    """What a package's parts expand to, together (as its zip directory says)."""
    import io

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return sum(member.file_size for member in archive.infolist())


def clip(text: str, limit: int = MAX_TEXT_CHARS) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[:limit], True


def digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def current(path: str, shown: str) -> bytes | None:
    """The file's bytes now, or None when there is none."""
    try:
        return read_bytes(path, shown)
    except FileNotFoundError:
        return None


def review(ctx, shown: str, before: str, after: str) -> None:
    """Ask the person to accept the change when the chat reviews writes; refuse it
    unless accepted."""
    if not (ctx.get_chat_context() or {}).get("reviewWrites"):
        return
    try:
        [verdict] = ctx.ask_user([{"kind": "diff", "question": f"Save this change to {shown}?",
                                   "before": before[:MAX_DIFF_CHARS],
                                   "after": after[:MAX_DIFF_CHARS], "title": shown}])
    except Exception as exc:  # not answered: no one there, or the form was refused
        raise Rejected(f"the change to {shown} is to be reviewed first, and it was not "
                       f"accepted ({exc}); nothing was written. Headless, accept it with "
                       "--answers FILE holding [[\"accept\"]] or a delegate, or set "
                       "tools.review_writes to never") from None
    if verdict != "accept":
        raise Rejected(f"the change to {shown} was rejected; nothing was written")


def save(ctx, path: str, shown: str, *, read_before: bytes | None, data: bytes,
         before: str, after: str) -> dict:
    """Write ``data`` to ``path`` once reviewed, if the file is still what was read
    (``read_before``; None: it must still be missing); show the change as a diff.

    Returns:
        ``{"path", "bytes", "created", "diff"}``.
    """
    if len(data) > MAX_FILE_BYTES:
        raise DocumentError(f"the new {shown} would be {len(data)} bytes; the office tools "
                            f"write at most {MAX_FILE_BYTES}")
    review(ctx, shown, before, after)
    if digest(current(path, shown)) != digest(read_before):
        raise OSError(f"{shown} changed while the change was being made; nothing was "
                      "written: read it again")
    token = keep_earlier(ctx, read_before) if read_before is not None else None
    write_atomically(path, data)
    ctx.display.diff(before[:MAX_DIFF_CHARS], after[:MAX_DIFF_CHARS], shown)
    ctx.set_progress(1)
    diff = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                        f"a/{shown}", f"b/{shown}"))
    diff, cut = clip(diff, MAX_DIFF_CHARS)
    return {"path": shown, "bytes": len(data), "created": read_before is None,
            "diff": diff + ("\n… (the diff is cut here)" if cut else ""),
            "change": {"summary": f"{'Made' if read_before is None else 'Changed'} {shown}"[:300],
                       "undo": {"tool": "restore_document", "arguments": {
                           "path": shown, "token": token, "before": digest(read_before),
                           "after": digest(data)}}}}


def write_atomically(path: str, data: bytes) -> None:
    """Write ``data`` beside ``path`` and rename it over, as one step."""
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _undo_folder(ctx) -> str:
    return os.path.join(project(ctx), *UNDO_FOLDER)


def keep_earlier(ctx, data: bytes) -> str:
    """Keep a document's earlier bytes for its undo; returns their token. The oldest
    copies past ``MAX_KEPT`` are let go (their change can no longer be undone)."""
    import secrets

    folder = _undo_folder(ctx)
    if not os.path.isdir(folder):
        os.makedirs(folder, mode=0o700, exist_ok=True)
        write_atomically(os.path.join(folder, ".gitignore"), b"# Earlier versions kept for undo.\n*\n")
    token = secrets.token_hex(16)
    write_atomically(os.path.join(folder, f"{token}.bak"), data)
    kept = sorted((entry for entry in os.scandir(folder) if entry.name.endswith(".bak")),
                  key=lambda entry: entry.stat().st_mtime_ns)
    for entry in kept[:-MAX_KEPT]:
        try:
            os.unlink(entry.path)
        except OSError:
            pass
    return token


def restore(ctx, args, suffixes: tuple[str, ...]) -> dict:
    """Undo one saved change (the person's alone: ``restore_document`` is person-only):
    put the earlier bytes back, or remove a file the change made, only while the
    document is still what the change left."""
    path, shown = locate(ctx, args.get("path"), suffixes, "restore_document")
    token, before, after = args.get("token"), args.get("before"), args.get("after")
    now = current(path, shown)
    if digest(now) != after:
        raise OSError(f"{shown} was changed again after this change; your version is kept "
                      "and nothing was undone")
    if token is None:
        if before is not None:
            raise ValueError("an undo without a kept copy is only for a document the change made")
        os.unlink(path)
        ctx.set_progress(1)
        return {"path": shown, "removed": True}
    if not isinstance(token, str) or len(token) != 32 or any(c not in "0123456789abcdef" for c in token):
        raise ValueError("the undo's token is not one this add-on makes")
    copy = os.path.join(_undo_folder(ctx), f"{token}.bak")
    try:
        earlier = read_bytes(copy, "the kept copy")
    except FileNotFoundError:
        raise FileNotFoundError(f"the earlier {shown} is no longer kept (at most {MAX_KEPT} "
                                "are); nothing was undone") from None
    if digest(earlier) != before:
        raise OSError(f"the kept copy of {shown} is not what it was; nothing was undone")
    write_atomically(path, earlier)
    os.unlink(copy)
    ctx.set_progress(1)
    return {"path": shown, "restored": True}


def target(ctx, args, suffixes: tuple[str, ...], tool: str) -> tuple[str, str, bytes | None]:
    """For a create tool: the path, as shown, and the bytes there now (None: missing);
    an existing file is replaced only with ``overwrite``."""
    path, shown = locate(ctx, args.get("path"), suffixes, tool)
    existing = current(path, shown)
    if existing is not None and not args.get("overwrite"):
        raise FileExistsError(f"{shown} exists; pass overwrite: true to replace it (the "
                              "change is shown for review first)")
    return path, shown, existing
