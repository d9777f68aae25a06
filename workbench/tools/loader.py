"""Read an extension folder into the registry without running any of its code.

The manifest is validated first; an invalid one becomes a ``LoadError`` with a
person's message, never an exception that stops the host.
"""

from __future__ import annotations

from pathlib import Path

from workbench.manifest.models import Manifest
from workbench.precedence import MAX_TOOL_NAME
from workbench.precedence import addon_tool_name as tool_name
from workbench.manifest.validate import validate_extension
from workbench.tools.registry import LoadError, Tool, ToolRegistry

BUILTIN_DIR = Path(__file__).resolve().parents[2] / "extensions" / "builtin"
"""The built-in extension shipped beside the package."""


def load_extension(registry: ToolRegistry, folder: Path, *, source: str = "extension") -> list[Tool]:
    """Validate ``folder`` and offer its tools to ``registry``.

    Returns:
        The tools added; empty when the extension did not load (see
        ``registry.load_errors``).
    """
    return read_extension(registry, folder, source=source)[1]


def read_extension(registry: ToolRegistry, folder: Path, *,
                   source: str = "extension") -> tuple[Manifest | None, list[Tool]]:
    """``load_extension``, also returning the manifest (None when it did not load)."""
    report = validate_extension(folder)
    if not report.valid or report.manifest is None:
        first = report.errors[0] if report.errors else None
        detail = f"{first.pointer or '/'}: {first.message}" if first else "invalid manifest"
        registry.load_errors.append(LoadError(folder.name, folder, detail))
        return None, []
    return report.manifest, register(registry, folder, report.manifest, source=source)


def register(registry: ToolRegistry, folder: Path, manifest: Manifest, *,
             source: str = "extension", owner: str = "", first_party: bool = False) -> list[Tool]:
    """Offer the tools of an already validated ``manifest`` (of ``folder``) to ``registry``;
    ``owner`` is the extension's identity when it is not its name (``Tool.owner``).
    ``first_party`` (a shipped add-on installed from its own folder) offers each tool
    as ``addon__<name>__<tool>``; one whose name would pass 64 characters is left out,
    said so in the registry's load errors."""
    entry, runtime = manifest.resolve_entry(folder) if manifest.tools else (None, None)
    tools = []
    for spec in manifest.tools:
        name = tool_name(manifest.name, spec.name) if first_party else spec.name
        if len(name) > MAX_TOOL_NAME:
            registry.load_errors.append(LoadError(
                manifest.name, folder, f"the tool {spec.name!r} is left out: as {name!r} its "
                f"name is longer than {MAX_TOOL_NAME} characters"))
            continue
        tool = Tool(
            name=name, declared=spec.name if first_party else "", first_party=first_party,
            audience=spec.audience, action=spec.action, replaces=tuple(spec.replaces),
            description=spec.description, parameters=spec.parameters,
            extension=manifest.name, source=source, function=spec.function, folder=folder,
            entry=entry, runtime=runtime,
            permissions=spec.permissions.model_dump(by_alias=True, exclude_none=True),
            timeout_ms=spec.timeout_ms, platforms=tuple(spec.platforms),
            always_available=spec.always_available, triggers=tuple(spec.triggers),
            database=manifest.database, parallel_safe=spec.parallel_safe, owner=owner)
        registry.add(tool)
        tools.append(tool)
    return tools
