"""Extension folders written for a test: a manifest and an entry file, beside labs.py so
every test folder imports the same one.

``write_extension(folder, "ext-a", ["one", "two"])`` writes a Python extension whose
tools answer ``{"from": "ext-a", "tool": "one"}``; give ``code`` for an entry of your own,
``tools`` as a mapping for each tool's manifest fields (permissions, parameters, …), and
any other manifest field as a keyword.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def answering_code(name: str, tools: Iterable[Mapping[str, Any]]) -> str:
    """A Python entry whose function per tool returns its extension's and tool's name."""
    return "".join(f"def {tool.get('function', tool.get('name'))}(args, ctx):\n"
                   f"    return {{'from': {name!r}, 'tool': {tool['name']!r}}}\n\n\n"
                   for tool in tools) or "VALUE = 1\n"


Tools = Mapping[str, Mapping[str, Any]] | Iterable[str] | Iterable[Mapping[str, Any]]


def tool_entries(tools: Tools) -> list[dict[str, Any]]:
    """The manifest's ``tools``. Whole entries (mappings) are taken as they are; a name,
    or a name with some fields, makes an entry whose function is its name and whose
    parameters are an object, unless its fields say otherwise."""
    if isinstance(tools, Mapping):
        specs = tools
    else:
        listed = list(tools)
        if all(isinstance(entry, Mapping) for entry in listed):
            return [dict(entry) for entry in listed]  # type: ignore[arg-type]
        specs = {tool: {} for tool in listed}
    return [{"name": tool, "description": f"Do {tool}.", "function": tool,
             "parameters": {"type": "object", "properties": {}}, **spec}
            for tool, spec in specs.items()]


def write_extension(folder: Path, name: str, tools: Tools = (), *,
                    code: str | None = None, entry: str | None = "main.py",
                    version: str | None = None, files: Mapping[str, str] | None = None,
                    manifest: Mapping[str, Any] | None = None, **fields: Any) -> Path:
    """Write an extension named ``name`` into ``folder`` (made here) and return it.

    Args:
        folder: Where (made if missing).
        tools: Tool names, each tool's manifest fields by name, or whole entries.
        code: The entry's source (dedented); by default each tool returns
            ``{"from": name, "tool": tool}`` (Python entries only).
        entry: The entry file, or None for a manifest without one.
        version: When given, a ``package.json`` of that version is written too.
        files: More files by relative path.
        manifest: Manifest fields that replace what was made, even ``entry`` (whose
            file is still the ``entry`` argument's).
        fields: Any other manifest field (``displayName``, ``database``, ``hooks``, …).
    """
    folder.mkdir(parents=True, exist_ok=True)
    entries = tool_entries(tools)
    data: dict[str, Any] = {"name": name, "displayName": name, "description": "A test extension."}
    if entry is not None:
        data["entry"] = entry
        source = (textwrap.dedent(code) if code is not None
                  else answering_code(name, entries))
        (folder / entry).write_text(source)
    data["tools"] = entries
    data.update(fields)
    data.update(manifest or {})
    (folder / "loca.json").write_text(json.dumps(data, indent=2))
    if version is not None:
        (folder / "package.json").write_text(json.dumps({"name": name, "version": version}))
    for relative, text in (files or {}).items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder
