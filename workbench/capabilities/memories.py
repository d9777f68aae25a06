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

import errno
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.errors import ToolError
from workbench.sandbox.paths import read_beneath, stat_beneath

MAX_CONTENT = 1 << 20
MAX_SHIPPED = 8 << 20
"""The largest shipped file the host reads for the model or a tool."""
_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)


def front_matter(text: str) -> dict[str, str]:
    """The simple ``key: value`` pairs of a Markdown file's front matter."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}
    pairs = {}
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t")):
            pairs[key.strip()] = value.strip().strip("\"'")
    return pairs


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
    """
    memory = ShippedMemory(title="", kind=kind, path=path, extension=extension, summary=None,
                           updated_ms=0, root=root)
    text = memory.read()
    meta = front_matter(text)
    heading = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), None)
    title = meta.get("name") or meta.get("title") or heading or path.stem
    return ShippedMemory(title=title, kind=kind, path=path, extension=extension,
                         summary=meta.get("description"), updated_ms=memory.stamp() // 1_000_000,
                         root=root)


class Memories:
    """The memories a tool can reach; see the module docstring."""

    def __init__(self, store) -> None:
        self.store = store
        self.shipped: dict[str, ShippedMemory] = {}
        self.on_saved: Callable[[str, str, str | None], None] | None = None
        """Called after each write or edit with the memory's title, who saved it and the
        chat it was saved in (None outside one)."""

    def add_shipped(self, memory: ShippedMemory) -> None:
        self.shipped.setdefault(memory.title, memory)

    def clear_shipped(self) -> None:
        self.shipped.clear()

    def remove_extension(self, extension: str) -> None:
        self.shipped = {t: m for t, m in self.shipped.items() if m.extension != extension}

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
        shipped = self.shipped.get(title)
        if shipped is None or shipped.kind != "skill":
            raise ToolError("not_found", f"no skill titled {title!r} with files")
        if not name or os.path.isabs(name) or ".." in Path(name).parts or "\0" in name:
            raise ToolError("invalid_arguments", f"{name!r} is not a file inside the skill")
        try:
            content = shipped.read(name)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise unreadable(f"the file {name!r} of the skill {title!r}", exc) from None
            raise ToolError("not_found", f"the skill {title!r} has no file {name!r}") from None
        return {"title": title, "name": name, "content": content}

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
