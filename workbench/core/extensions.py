"""Putting extensions into the registry at start: installed, project-local, samples.

Only extensions whose files match what the person approved are loaded; a held or
broken one is listed with its reason instead. Project-local extensions run only in
a trusted project, once a person consented to their files as they are, and never
under an installed extension's name; their tools, hooks, providers and knowledge
are kept under their identity (``project:FOLDER``, see ``workbench.ext.project``). ``extensions.enabled = false`` loads nothing but keeps the
diagnostics. Knowledge and skills that loaded extensions ship join the memories; the
hooks and providers they declare join their registries.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from workbench.capabilities.memories import Memories, read_shipped
from workbench.core.load_record import LoadRecord
from workbench.core.provider_registry import ProviderRegistry, RegisteredProvider
from workbench.errors import WorkbenchError
from workbench.manifest.front_matter import FrontMatterError
from workbench.ext.addons import addon_of
from workbench.ext.manager import ExtensionManager
from workbench.hooks.registry import Hook, HookRegistry
from workbench.tools.loader import read_extension, register
from workbench.tools.registry import LoadError, ToolRegistry

log = logging.getLogger(__name__)

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "extensions" / "samples"
"""The samples extension: one small tool per ctx capability, loaded in development mode."""


@dataclass
class Loaded:
    """What loading found: the extensions loaded and what the person should know."""

    extensions: list[dict] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


def _ship_memories(memories: Memories, name: str, folder: Path, manifest,
                   notices: list[str]) -> None:
    """Shipped knowledge and skills, kept under ``name`` (the extension's identity)."""
    for memory in manifest.memories:
        try:
            memories.add_shipped(read_shipped(name, memory.kind, folder / memory.path, folder))
        except OSError as exc:
            log.warning("cannot read %s's memory %s: %s", name, memory.path, exc)
        except FrontMatterError as exc:
            notices.append(f"{name}: the skill {memory.path} is left out: its SKILL.md {exc}")


def _register_providers(providers: ProviderRegistry, folder: Path, manifest, source: str,
                        owner: str = "") -> None:
    entry, runtime = manifest.resolve_entry(folder)
    for spec in manifest.providers:
        providers.add(RegisteredProvider(
            type=spec.type, name=spec.name, extension=manifest.name, source=source, owner=owner,
            function=spec.function, folder=folder, entry=entry, runtime=runtime,
            config=spec.config.model_dump(exclude_unset=True),
            permissions=spec.permissions.model_dump(by_alias=True, exclude_none=True),
            database=manifest.database))


def _load(registry: ToolRegistry, memories: Memories, loaded: Loaded, folder: Path, *,
          source: str, scope: str, version: str = "", manifest=None,
          hooks: HookRegistry | None = None, providers: ProviderRegistry | None = None,
          owner: str = "", first_party: bool = False) -> None:
    """Load ``folder``; a ``manifest`` the caller already validated is not read again.
    ``owner`` is the identity of a project extension (empty: its name); ``first_party``
    a shipped add-on installed from its own folder (its tools take ``addon__ID__``)."""
    if manifest is None:
        manifest, tools = read_extension(registry, folder, source=source)
    else:
        tools = register(registry, folder, manifest, source=source, owner=owner,
                         first_party=first_party)
    if manifest is not None:
        _ship_memories(memories, owner or manifest.name, folder, manifest, loaded.notices)
        if hooks is not None and manifest.hooks:
            entry, runtime = manifest.resolve_entry(folder)
            for event, function in manifest.hooks.items():
                hooks.add(Hook(extension=manifest.name, event=event, function=function,
                               folder=folder, entry=entry, runtime=runtime, owner=owner,
                               source=source))
        if providers is not None and manifest.providers:
            _register_providers(providers, folder, manifest, source, owner)
        loaded.extensions.append({"name": manifest.name, "version": version, "path": str(folder),
                                  "source": source, "scope": scope,
                                  "identity": owner or manifest.name,
                                  "tools": [t.name for t in tools]})


def load_extensions(*, registry: ToolRegistry, manager: ExtensionManager | LoadRecord,
                    memories: Memories,
                    cwd: Path, enabled: bool, samples: bool,
                    hooks: HookRegistry | None = None,
                    providers: ProviderRegistry | None = None) -> Loaded:
    """Install the built-in if needed, then load what may run; see the module docstring."""
    loaded = Loaded()
    try:
        manager.ensure_builtin()
    except WorkbenchError as exc:
        loaded.notices.append(f"the built-in extension was not installed: {exc}")
    if not enabled:
        loaded.notices.append("extension loading is off (extensions.enabled = false); "
                              "`workbench ext status` still reports them")
    for ext in manager.list():
        if ext.state != "ok":
            registry.load_errors.append(LoadError(ext.name, ext.path, ext.reason))
            continue
        if enabled and ext.enabled:
            _load(registry, memories, loaded, ext.path, source="builtin" if ext.builtin else "extension",
                  scope="global", version=ext.version, manifest=ext.manifest, hooks=hooks,
                  providers=providers, first_party=addon_of(ext.source, ext.name))
    for found in manager.discover(cwd, include_global=False):
        if not found.runnable:
            tools = tuple(tool.name for tool in found.manifest.tools) if found.manifest else ()
            registry.load_errors.append(LoadError(found.name, found.folder, found.reason, tools))
            if found.valid and found.trusted:
                # Said where a headless run shows it (its notices), not only in the report.
                loaded.notices.append(f"the project extension {found.name} "
                                      f"({found.folder}) was not loaded: {found.reason}")
        elif enabled:
            _load(registry, memories, loaded, found.folder, source="extension", scope="project",
                  manifest=found.manifest, hooks=hooks, providers=providers,
                  owner=found.identity)
    if samples and enabled and SAMPLES_DIR.is_dir():
        _load(registry, memories, loaded, SAMPLES_DIR, source="extension", scope="development",
              hooks=hooks, providers=providers)
    return loaded
