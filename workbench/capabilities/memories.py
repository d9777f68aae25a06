"""``ctx.memories``: the user's knowledge and skills, and those extensions ship.

The user's own memories live in the store and can be written; those an extension
ships are read from its folder and are read-only. A skill is a folder in the Agent
Skills format (``SKILL.md`` with ``name`` and ``description`` in its front matter,
plus reference files reached with ``get_file``); knowledge is one Markdown file.
Each write or edit is reported to ``on_saved``, which the host sets (it hands the
memory to the memory providers).

A shipped file is always read relative to its extension's folder, with no symbolic
link followed and never outside it (``sandbox/paths.py``): a knowledge file or a
skill's file replaced by a link is refused, naming it, never read through.
"""

from __future__ import annotations

import base64
import errno
import functools
import hashlib
import mimetypes
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.errors import ToolError
from workbench.manifest.front_matter import (MAX_FRONT_MATTER, FrontMatter, FrontMatterError,
                                             parse_front_matter)
from workbench.sandbox.paths import read_beneath, stat_beneath

MAX_CONTENT = 1 << 20

MAX_SHIPPED = 8 << 20
"""The largest shipped file the host reads for the model or a tool."""
@functools.cache
def _types() -> mimetypes.MimeTypes:
    """MIME types by file name from the built-in table alone, the same on every system
    (made when a file is first handed out, not at every start)."""
    types = mimetypes.MimeTypes()
    types.add_type("text/markdown", ".md")
    types.add_type("text/markdown", ".markdown")
    return types

MAX_FILE = 8 << 20
"""The largest bundled file ``get_file`` returns (base64 makes a binary one a third larger)."""


def front_matter(text: str) -> dict[str, str]:
    """The text values of a Markdown file's YAML front matter (see
    :mod:`workbench.manifest.front_matter`); empty when it has none or it is not valid.

    Each head is read once (every turn lists the skills by their descriptions): the
    answers are kept by the digest of the text's head, the most of it that can hold
    front matter (CRLF line ends counted twice)."""
    head = text[:2 * MAX_FRONT_MATTER + 4096]
    key = hashlib.blake2b(head.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    found = _READ.get(key)
    if found is None:
        try:
            matter = parse_front_matter(head)
            found = tuple((k, v) for k in matter.data if (v := matter.text(k)) is not None)
        except FrontMatterError:
            found = ()
        with _READ_LOCK:
            if len(_READ) >= _READ_MAX:
                _READ.pop(next(iter(_READ)))
            _READ[key] = found
    return dict(found)


_READ: dict[bytes, tuple[tuple[str, str], ...]] = {}
_READ_LOCK = threading.Lock()
_READ_MAX = 8192


def read_bytes(path: Path) -> bytes:
    """The one read of a memory's file from disk: every file a memory reaches is read here."""
    with open(path, "rb") as handle:
        return handle.read()


def read_text(path: Path) -> str:
    """A memory's Markdown file as text (bytes that are not UTF-8 shown as U+FFFD)."""
    return read_bytes(path).decode("utf-8", errors="replace")


def file_answer(name: str, data: bytes) -> dict[str, Any]:
    """A bundled file as a tool is handed it: text when it is UTF-8 text, else base64
    with its MIME type."""
    guessed = _types().guess_type(name)[0]
    if b"\0" not in data:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            return {"content": text, "encoding": "text", "mimeType": guessed or "text/plain",
                    "size": len(data)}
    return {"content": base64.b64encode(data).decode("ascii"), "encoding": "base64",
            "mimeType": guessed or "application/octet-stream", "size": len(data)}


def find_in(root: Path, name: str) -> tuple[Path, str | None]:
    """The file ``name`` inside the folder ``root``: exactly, else the one file whose path
    differs from it only in case (with a note saying so).

    Raises:
        ToolError: ``name`` is absolute or climbs out, leads out of ``root``, is no file
            there, or matches several files but for case.
    """
    if not name or os.path.isabs(name) or ".." in Path(name).parts:
        raise ToolError("invalid_arguments", f"{name!r} is not a file inside the skill")
    base = root.resolve()
    target = (root / name).resolve()
    if target.is_relative_to(base) and target.is_file():
        return target, None
    matches = [root]
    for part in Path(name).parts:
        folded = part.casefold()
        matches = [child for folder in matches if folder.is_dir() and not folder.is_symlink()
                   for child in sorted(folder.iterdir()) if child.name.casefold() == folded]
    matches = [m for m in matches if m.is_file() and m.resolve().is_relative_to(base)]
    if len(matches) > 1:
        names = ", ".join(repr(m.relative_to(root).as_posix()) for m in matches)
        raise ToolError("not_found", f"{name!r} matches several files but for case: {names}")
    if not matches:
        raise ToolError("not_found", f"no file {name!r}")
    actual = matches[0].relative_to(root).as_posix()
    return matches[0].resolve(), f"no file {name!r}; read {actual!r}, which differs only in case"


def read_inside(root: Path, relative: str) -> str:
    """The text of the file ``relative`` inside the folder ``root``, reached with no
    symbolic link and never outside ``root``.

    Raises:
        OSError: It cannot be read so; ``ELOOP`` when a link is in the way.
    """
    return read_beneath(root, relative, MAX_SHIPPED).decode("utf-8", errors="replace")


def unreadable(what: str, exc: OSError) -> ToolError:
    """The error a tool gets for a shipped file the host will not read."""
    if exc.errno == errno.ELOOP:
        return ToolError("permission", f"{what} is a symbolic link or is reached through one; "
                         "links in an extension's files are never followed")
    if exc.errno in (errno.ENOENT, errno.EISDIR, errno.ENOTDIR, errno.EINVAL):
        return ToolError("not_found", f"{what} is not a file")
    return ToolError("unavailable", f"{what} cannot be read: {exc.strerror}")


@dataclass(frozen=True)
class ShippedMemory:
    """A memory an extension ships: read-only.

    Attributes:
        path: The knowledge file or skill folder.
        root: The extension's folder, which every read is made beneath (``path``'s
            parent when not given).
    """

    title: str
    kind: str
    path: Path
    extension: str
    summary: str | None
    updated_ms: int
    root: Path | None = None

    @property
    def main_file(self) -> Path:
        return self.path / "SKILL.md" if self.kind == "skill" else self.path

    @property
    def base(self) -> Path:
        return self.root if self.root is not None else self.path.parent

    def relative(self, name: str | None = None) -> str:
        """The path, inside the extension's folder, of the main file (or of the skill's
        file ``name``)."""
        inside = self.path.relative_to(self.base).as_posix()
        if name is not None:
            return f"{inside}/{name}"
        return f"{inside}/SKILL.md" if self.kind == "skill" else inside

    def read(self, name: str | None = None) -> str:
        """The main file's text (or the skill's file ``name``): see :func:`read_inside`."""
        return read_inside(self.base, self.relative(name))

    def stamp(self) -> int:
        """The main file's mtime in ns, reached as :meth:`read` reaches it."""
        return stat_beneath(self.base, self.relative()).st_mtime_ns


def read_shipped(extension: str, kind: str, path: Path, root: Path | None = None) -> ShippedMemory:
    """Describe a shipped knowledge file or skill folder (its title from its own text),
    read beneath the extension's folder ``root`` (``path``'s parent when not given).

    Raises:
        OSError: It cannot be read, or a symbolic link is in the way.
        FrontMatterError: A skill's front matter is not a YAML mapping.
    """
    memory = ShippedMemory(title="", kind=kind, path=path, extension=extension, summary=None,
                           updated_ms=0, root=root)
    text = memory.read()
    if kind == "skill":
        found = parse_front_matter(text)
    else:
        found = FrontMatter(data=front_matter(text), body=text)
    heading = next((line[2:].strip() for line in found.body.splitlines() if line.startswith("# ")),
                   None)
    title = found.text("name") or found.text("title") or heading or path.stem
    return ShippedMemory(title=title.strip(), kind=kind, path=path, extension=extension,
                         summary=found.text("description"),
                         updated_ms=memory.stamp() // 1_000_000, root=root)


def skill_folder_name(title: str) -> str:
    """The folder name the person's own skill ``title`` is kept under: its safe
    characters and a digest of the whole title, so two titles never share one."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "-" for c in title)
    return f"{safe.strip('.-')[:60] or 'skill'}-{hashlib.sha256(title.encode()).hexdigest()[:12]}"


def _party(memory: ShippedMemory) -> dict[str, Any]:
    return {"source": f"extension:{memory.extension}", "extension": memory.extension,
            "path": str(memory.path)}


class Memories:
    """The memories a tool can reach; see the module docstring."""

    def __init__(self, store, skills_dir: Path | None = None) -> None:
        self.store = store
        self.skills_dir = skills_dir
        """Where the folders of the person's own skills are kept (``skill_folder``)."""
        self.shipped: dict[str, ShippedMemory] = {}
        self.shadowed: list[ShippedMemory] = []
        """Shipped memories whose title an earlier-loaded one already had: conflicts."""
        self.on_saved: Callable[[str, str, str | None], None] | None = None
        """Called after each write or edit with the memory's title, who saved it and the
        chat it was saved in (None outside one)."""

    def add_shipped(self, memory: ShippedMemory) -> None:
        """Add a memory an extension ships; one whose title is taken is kept as shadowed."""
        if memory.title in self.shipped:
            self.shadowed.append(memory)
        else:
            self.shipped[memory.title] = memory

    def clear_shipped(self) -> None:
        self.shipped.clear()
        self.shadowed.clear()

    def remove_extension(self, extension: str) -> None:
        self.shipped = {t: m for t, m in self.shipped.items() if m.extension != extension}
        self.shadowed = [m for m in self.shadowed if m.extension != extension]

    def conflicts(self) -> list[dict[str, Any]]:
        """Each title more than one source gives a memory: ``{"title", "kind", "winner",
        "shadowed"}``, each party ``{"source", "extension"?, "path"?}``. The person's own
        memory wins over the shipped ones, then the extension loaded first."""
        mine = {row["title"]: row for row in self.store.list_memories()}
        losers: dict[str, list[ShippedMemory]] = {}
        for memory in self.shadowed:
            losers.setdefault(memory.title, []).append(memory)
        found = []
        for title, memory in self.shipped.items():
            shadowed = losers.get(title, [])
            if title in mine:
                winner = {"source": "user"}
                shadowed = [memory, *shadowed]
            elif shadowed:
                winner = _party(memory)
            else:
                continue
            found.append({"title": title, "kind": memory.kind, "winner": winner,
                          "shadowed": [_party(m) for m in shadowed]})
        return found

    def skill_folder(self, title: str) -> Path | None:
        """The folder of the person's own skill ``title`` with its reference files, if
        it has one."""
        if self.skills_dir is None:
            return None
        folder = self.skills_dir / skill_folder_name(title)
        return folder if (folder / "SKILL.md").is_file() else None

    def list(self) -> list[dict[str, Any]]:
        found = [{"title": r["title"], "kind": r["kind"], "summary": r["summary"],
                  "updatedAtMs": r["updated_at"], "readOnly": False}
                 for r in self.store.list_memories()]
        titles = {m["title"] for m in found}
        found += [{"title": m.title, "kind": m.kind, "summary": m.summary, "updatedAtMs": m.updated_ms,
                   "readOnly": True, "extension": m.extension}
                  for m in self.shipped.values() if m.title not in titles]
        return found

    def get(self, title: str) -> dict[str, Any]:
        row = self.store.get_memory(title)
        if row is not None:
            return {"title": title, "content": row["content"]}
        shipped = self.shipped.get(title)
        if shipped is None:
            raise ToolError("not_found", f"no memory titled {title!r}")
        try:
            content = shipped.read()
        except OSError as exc:
            raise unreadable(f"the file {shipped.relative()} of {shipped.extension}", exc) from None
        return {"title": title, "content": content}

    def get_file(self, title: str, name: str) -> dict[str, Any]:
        """One file a skill bundles — the person's own skill folder's or a shipped one's:
        text as text, anything else base64 with its MIME type (:func:`file_answer`)."""
        root = None
        row = self.store.get_memory(title)
        if row is not None:
            root = self.skill_folder(title) if row["kind"] == "skill" else None
        else:
            shipped = self.shipped.get(title)
            root = shipped.path if shipped is not None and shipped.kind == "skill" else None
        if root is None:
            raise ToolError("not_found", f"no skill titled {title!r} with files")
        if not name or os.path.isabs(name) or ".." in Path(name).parts or "\0" in name:
            raise ToolError("invalid_arguments", f"{name!r} is not a file inside the skill")
        # Read beneath the extension's folder for a shipped skill (its folder may not be a
        # link either), beneath the person's own skill folder otherwise; never through a link.
        base, prefix = root, ""
        if row is None and shipped is not None:
            base = shipped.base
            prefix = shipped.path.relative_to(shipped.base).as_posix() + "/"
        relative, note = name, None
        try:
            data = read_beneath(base, prefix + name, MAX_FILE)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise unreadable(f"the file {name!r} of the skill {title!r}", exc) from None
            if exc.errno == errno.EFBIG:
                raise ToolError("tool", f"the skill {title!r}'s file {name!r} is larger than "
                                f"{MAX_FILE} bytes, the most that is read") from None
            try:
                target, note = find_in(root, name)  # a path that differs only in case
            except ToolError as missing:
                raise ToolError(missing.kind, f"the skill {title!r}: {missing.message}") from None
            relative = target.relative_to(root.resolve()).as_posix()
            try:
                data = read_beneath(base, prefix + relative, MAX_FILE)
            except OSError as again:
                raise unreadable(f"the file {relative!r} of the skill {title!r}", again) from None
        answer = {"title": title, "name": relative, **file_answer(relative, data)}
        if note:
            answer["note"] = note
        return answer

    def write(self, title: str, content: str) -> dict[str, Any]:
        self._writable(title, content)
        before, created = self.store.put_memory(title, content)
        return {"title": title, "before": before, "after": content, "created": created}

    def edit(self, title: str, find: str, replace: str) -> dict[str, Any]:
        self._writable(title, replace)
        row = self.store.get_memory(title)
        if row is None:
            raise ToolError("not_found", f"no memory titled {title!r}")
        before = row["content"]
        count = before.count(find) if find else 0
        if count != 1:
            raise ToolError("tool", f"edit needs exactly one occurrence of the text to find; found {count}")
        after = before.replace(find, replace, 1)
        self.store.put_memory(title, after)
        return {"title": title, "before": before, "after": after}

    def _writable(self, title: str, content: str) -> None:
        if not isinstance(title, str) or not title.strip() or len(title) > 200:
            raise ToolError("invalid_arguments", "a memory needs a title of 1 to 200 characters")
        if not isinstance(content, str) or len(content) > MAX_CONTENT:
            raise ToolError("invalid_arguments", f"a memory's content is text of at most {MAX_CONTENT} bytes")
        if title in self.shipped and self.store.get_memory(title) is None:
            raise ToolError("permission", f"{title!r} ships with {self.shipped[title].extension} and is read-only")

    def call(self, member: str, params: dict[str, Any], *, actor: str,
             session_id: str | None = None) -> Any:
        """Serve ``ctx.memories.<member>`` with ``params`` from the worker of a call in
        the chat ``session_id``."""
        def text(name: str) -> str:
            value = params.get(name)
            if not isinstance(value, str):
                raise ToolError("invalid_arguments", f"memories.{member} needs {name} as text")
            return value

        if member == "list":
            return self.list()
        if member == "get":
            return self.get(text("title"))
        if member in ("get_file", "getFile"):
            return self.get_file(text("title"), text("name"))
        if member == "write":
            result = self.write(text("title"), text("content"))
        elif member == "edit":
            result = self.edit(text("title"), text("find"), text("replace"))
        else:
            raise ToolError("invalid_arguments", f"memories has no member {member!r}")
        self.store.audit(actor, f"memory.{member}", result["title"])
        if self.on_saved is not None:
            self.on_saved(result["title"], actor, session_id)
        return result
