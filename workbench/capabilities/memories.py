"""``ctx.memories``: the user's knowledge and skills, and those extensions ship.

The user's own memories live in the store and can be written; those an extension
ships are read from its folder and are read-only. A skill is a folder in the Agent
Skills format (``SKILL.md`` with ``name`` and ``description`` in its front matter,
plus reference files reached with ``get_file``); knowledge is one Markdown file.
Each write or edit is reported to ``on_saved``, which the host sets (it hands the
memory to the memory providers).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.errors import ToolError

MAX_CONTENT = 1 << 20
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


@dataclass(frozen=True)
class ShippedMemory:
    """A memory an extension ships: read-only."""

    title: str
    kind: str
    path: Path
    extension: str
    summary: str | None
    updated_ms: int

    @property
    def main_file(self) -> Path:
        return self.path / "SKILL.md" if self.kind == "skill" else self.path


def read_shipped(extension: str, kind: str, path: Path) -> ShippedMemory:
    """Describe a shipped knowledge file or skill folder (its title from its own text)."""
    main = path / "SKILL.md" if kind == "skill" else path
    text = main.read_text(encoding="utf-8", errors="replace")
    meta = front_matter(text)
    heading = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), None)
    title = meta.get("name") or meta.get("title") or heading or path.stem
    return ShippedMemory(title=title, kind=kind, path=path, extension=extension,
                         summary=meta.get("description"), updated_ms=int(main.stat().st_mtime * 1000))


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
        return {"title": title, "content": shipped.main_file.read_text(encoding="utf-8", errors="replace")}

    def get_file(self, title: str, name: str) -> dict[str, Any]:
        shipped = self.shipped.get(title)
        if shipped is None or shipped.kind != "skill":
            raise ToolError("not_found", f"no skill titled {title!r} with files")
        if not name or os.path.isabs(name) or ".." in Path(name).parts:
            raise ToolError("invalid_arguments", f"{name!r} is not a file inside the skill")
        target = (shipped.path / name).resolve()
        if not target.is_relative_to(shipped.path.resolve()) or not target.is_file():
            raise ToolError("not_found", f"the skill {title!r} has no file {name!r}")
        return {"title": title, "name": name, "content": target.read_text(encoding="utf-8", errors="replace")}

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
