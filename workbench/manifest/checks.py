"""The checks of a manifest that its models cannot make alone.

The models check each value's shape. What needs the whole document, the folder or a
second schema language is checked here, on the raw parsed data, so that these checks
still run (and report) when the models refused something elsewhere: tool names unique
and snake_case, provider names unique within their type, `parameters` a valid JSON
Schema of an object, each tool's, hook's and provider's `function` exported by the
entry module, each shipped memory present, inside the folder and of the right shape,
and keys the models ignore. Values the models refused are skipped
here, so nothing is reported twice. Nothing here runs the extension's code.

This module imports nothing of workbench but the manifest package.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
from pathlib import Path
from typing import Any

from workbench import ctx_spec
from workbench.manifest.exports import scan_exports
from workbench.manifest.front_matter import FrontMatterError, parse_front_matter
from workbench.manifest.locate import join_pointer
from workbench.precedence import RESERVED_PREFIX, is_reserved
from workbench.manifest.models import (
    EXPORT_NAME_PATTERN,
    PROVIDER_NAME_PATTERN,
    TOOL_NAME_PATTERN,
    Memory,
    Page,
    Permissions,
    Provider,
    Tool,
    permission_entry_model,
)
from workbench.manifest.paths import (ENTRY_CANDIDATES, WORKBENCH_TEMPLATES, check_relative_path,
                                      entry_candidates, runtime_for)
from workbench.manifest.problems import Collector

SNAKE_CASE = re.compile(r"[a-z][a-z0-9_]*|[a-z][a-z0-9-]*")
"""The recommended forms of a tool name: snake_case, or the kebab-case of the shipped
add-ons (``events-list``), both lowercase."""

MAX_SKILL_FILES = 5_000
"""The most files looked at inside one skill folder."""

UNPUBLISHED_DIRS = frozenset({".git", "node_modules", "__pycache__"})
"""Folders an install never copies (version control, installed dependencies, Python's
caches): their files are not counted or checked, but a link in their place is refused."""

MAX_FILE_PROBLEMS = 50
"""The most files named as links or special files in one report."""

_SPECIAL = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
            (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _kind_of(mode: int) -> str:
    return next((name for test, name in _SPECIAL if test(mode)), "not a regular file")


def check_files(folder: Path, found: Collector, *, max_bytes: int, max_files: int,
                max_file_bytes: int | None = None) -> None:
    """Refuse what an install cannot copy: links, special files (FIFOs, sockets,
    devices), a folder over its caps. Each link or special file is named by its path in
    the folder (up to ``MAX_FILE_PROBLEMS``); the walk stops at a cap. Installing a
    folder runs this same check before copying (``workbench.ext.fetch``)."""
    total = count = named = 0

    def refuse(relative: str, what: str) -> bool:
        nonlocal named
        named += 1
        if named <= MAX_FILE_PROBLEMS:
            found.error("", f"{relative}: {what}", locate_it=False)
        return named < MAX_FILE_PROBLEMS

    for directory, dirnames, filenames in os.walk(folder, followlinks=False):
        here = Path(directory)
        for name in list(dirnames):
            if (here / name).is_symlink():
                dirnames.remove(name)
                if not refuse(str((here / name).relative_to(folder)),
                              "a symbolic link; links are not accepted in extensions"):
                    return
        dirnames[:] = sorted(name for name in dirnames if name not in UNPUBLISHED_DIRS)
        count += len(dirnames)
        for name in sorted(filenames):
            relative = str((here / name).relative_to(folder))
            try:
                info = os.lstat(here / name)
            except OSError as exc:
                found.error("", f"{relative}: cannot be read ({exc.strerror})", locate_it=False)
                continue
            if stat.S_ISLNK(info.st_mode):
                if not refuse(relative, "a symbolic link; links are not accepted in extensions"):
                    return
                continue
            if not stat.S_ISREG(info.st_mode):
                if not refuse(relative, f"{_kind_of(info.st_mode)}; only plain files and "
                              "folders are accepted in extensions"):
                    return
                continue
            count += 1
            total += info.st_size
            if max_file_bytes is not None and info.st_size > max_file_bytes:
                found.error("", f"{relative}: {info.st_size} bytes; the limit for one file is "
                            f"{max_file_bytes}", locate_it=False)
            if total > max_bytes:
                found.error("", f"the extension folder is larger than {max_bytes} bytes",
                            locate_it=False)
                return
        if count > max_files:
            found.error("", f"the extension folder holds more than {max_files} "
                        "files and folders", locate_it=False)
            return


def _keys(model: type) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def _is_relative_path(value: Any) -> bool:
    try:
        check_relative_path(value)
    except (ValueError, TypeError):
        return False
    return isinstance(value, str)


def _unknown_keys(data: Any, known: list[str], pointer: str, found: Collector) -> None:
    """Warn about each key of `data` the model ignores, suggesting a near spelling."""
    if not isinstance(data, dict):
        return
    for key in data:
        if key in known:
            continue
        near = difflib.get_close_matches(key, known, n=1)
        hint = f"; did you mean '{near[0]}'?" if near else ""
        found.warning(join_pointer(pointer, key), f"unknown field '{key}' is ignored{hint}")


def _check_permission_keys(permissions: Any, pointer: str, found: Collector) -> None:
    """Warn about keys of a permissions object (at ``pointer``) that the models ignore."""
    known = _keys(Permissions)
    _unknown_keys(permissions, known + [k for k in ctx_spec.capability_kinds() if k not in known],
                  pointer, found)
    if not isinstance(permissions, dict):
        return
    for kind, entries in permissions.items():
        model = permission_entry_model(kind)
        kind_pointer = join_pointer(pointer, kind)
        if model is None:
            continue
        if isinstance(entries, dict):
            _unknown_keys(entries, _keys(model), kind_pointer, found)
        elif isinstance(entries, list):
            for position, entry in enumerate(entries):
                _unknown_keys(entry, _keys(model), join_pointer(kind_pointer, position), found)


def check_ignored_keys(tools: list[Any], memories: list[Any], found: Collector,
                       providers: list[Any] = ()) -> None:
    """Warn about keys of tools, providers, permissions and memories that the models ignore."""
    for index, tool in enumerate(tools):
        pointer = join_pointer("/tools", index)
        _unknown_keys(tool, _keys(Tool), pointer, found)
        permissions = tool.get("permissions") if isinstance(tool, dict) else None
        _check_permission_keys(permissions, join_pointer(pointer, "permissions"), found)
    for index, provider in enumerate(providers):
        pointer = join_pointer("/providers", index)
        _unknown_keys(provider, _keys(Provider), pointer, found)
        permissions = provider.get("permissions") if isinstance(provider, dict) else None
        _check_permission_keys(permissions, join_pointer(pointer, "permissions"), found)
    for index, memory in enumerate(memories):
        _unknown_keys(memory, _keys(Memory), join_pointer("/memories", index), found)


def check_workbench_templates(tools: list[Any], providers: list[Any], found: Collector) -> None:
    """Note each ``read``/``write`` path that starts with a template Workbench adds to
    the Loca format (``$project``): other hosts may not know it."""
    for owner, entries in (("/tools", tools), ("/providers", providers)):
        for index, item in enumerate(entries):
            permissions = item.get("permissions") if isinstance(item, dict) else None
            if not isinstance(permissions, dict):
                continue
            for kind in ("read", "write"):
                listed = permissions.get(kind)
                listed = [listed] if isinstance(listed, dict) else listed
                if not isinstance(listed, list):
                    continue
                for position, entry in enumerate(listed):
                    path = entry.get("path") if isinstance(entry, dict) else None
                    head = path.split("/", 1)[0] if isinstance(path, str) else ""
                    if head in WORKBENCH_TEMPLATES:
                        found.warning(
                            join_pointer(owner, index, "permissions", kind, position, "path"),
                            f"{head} (the folder the chat belongs to) is a Workbench addition "
                            "to the Loca format; other hosts may not know it")


PROVIDER_CONFIG_OWNERS = {"scopes": "memory", "priority": "search", "api_key_env": "model"}
"""The configuration keys that mean something for one provider type only."""


def check_providers(providers: list[Any], found: Collector) -> None:
    """Refuse a provider name repeated within its type; warn about a configuration key
    meant for another provider type."""
    first_use: dict[tuple[str, str], int] = {}
    for index, provider in enumerate(providers):
        if not isinstance(provider, dict):
            continue
        kind, name = provider.get("type"), provider.get("name")
        config = provider.get("config")
        if isinstance(config, dict) and isinstance(kind, str):
            for key, owner in PROVIDER_CONFIG_OWNERS.items():
                if key in config and kind != owner:
                    found.warning(join_pointer("/providers", index, "config", key),
                                  f"'{key}' applies to {owner} providers; this one is a "
                                  f"{kind} provider, so only its function reads it")
        if not isinstance(name, str) or not re.fullmatch(PROVIDER_NAME_PATTERN, name):
            continue
        if not isinstance(kind, str):
            continue
        if (kind, name) in first_use:
            found.error(join_pointer("/providers", index, "name"),
                        f"the {kind} provider name '{name}' is already used by "
                        f"/providers/{first_use[(kind, name)]}; provider names must be unique "
                        "within their type")
            continue
        first_use[(kind, name)] = index


def check_tool_names(tools: list[Any], found: Collector) -> None:
    """Refuse a repeated tool name; warn about a name that is not snake_case."""
    first_use: dict[str, int] = {}
    for index, tool in enumerate(tools):
        name = tool.get("name") if isinstance(tool, dict) else None
        if not isinstance(name, str) or not re.fullmatch(TOOL_NAME_PATTERN, name):
            continue
        pointer = join_pointer("/tools", index, "name")
        if is_reserved(name):
            found.error(pointer, f"the tool name '{name}' is in the namespace kept for the "
                        f"add-ons shipped with workbench ({RESERVED_PREFIX}…); name it "
                        "without that prefix")
            continue
        if name in first_use:
            found.error(pointer, f"the tool name '{name}' is already used by "
                        f"/tools/{first_use[name]}; tool names must be unique")
            continue
        first_use[name] = index
        if not SNAKE_CASE.fullmatch(name):
            found.warning(pointer, f"the tool name '{name}' is not snake_case "
                          "(lowercase letters, digits and '_', starting with a letter)")


def check_pages(pages: list[Any], tools: list[Any], found: Collector) -> None:
    """Refuse a repeated page id, and a page whose tool is not a tool of this manifest;
    warn about keys a page's model ignores."""
    declared = {tool.get("name") for tool in tools if isinstance(tool, dict)}
    first_use: dict[str, int] = {}
    for index, page in enumerate(pages):
        if not isinstance(page, dict):
            continue
        _unknown_keys(page, _keys(Page), join_pointer("/pages", index), found)
        page_id, tool = page.get("id"), page.get("tool")
        if isinstance(page_id, str):
            if page_id in first_use:
                found.error(join_pointer("/pages", index, "id"),
                            f"the page id '{page_id}' is already used by /pages/{first_use[page_id]}; "
                            "page ids must be unique")
            else:
                first_use[page_id] = index
        if isinstance(tool, str) and tool not in declared:
            found.error(join_pointer("/pages", index, "tool"),
                        f"the page's tool '{tool}' is not a tool of this extension: a page is "
                        "served by one of the tools its manifest declares")


def check_parameters(parameters: Any, pointer: str, found: Collector) -> None:
    """Check a tool's `parameters` against its JSON Schema meta-schema, and its top type.

    The dialect is the one the schema's own `$schema` names, else draft 2020-12.
    """
    if not isinstance(parameters, dict):
        return
    # Imported here: a start that finds every installed manifest checked already
    # (``workbench.ext.manifest_checks``) never needs jsonschema.
    from jsonschema.exceptions import best_match
    from jsonschema.validators import Draft202012Validator, validator_for

    dialect = parameters.get("$schema")
    if dialect is not None and not isinstance(dialect, str):
        found.error(join_pointer(pointer, "$schema"), "expected a string naming a JSON Schema dialect")
        return
    cls = Draft202012Validator if dialect is None else validator_for(parameters, default=None)
    if cls is None:
        found.warning(join_pointer(pointer, "$schema"),
                      f"unknown JSON Schema dialect {dialect!r}; checked as draft 2020-12")
        cls = Draft202012Validator
    meta_cls = validator_for(cls.META_SCHEMA, default=cls)
    checker = meta_cls(cls.META_SCHEMA, format_checker=cls.FORMAT_CHECKER)
    try:
        errors = list(checker.iter_errors(parameters))
    except RecursionError:
        found.error(pointer, "the schema nests too deeply to check")
        return
    for error in errors:
        error = best_match([error]) or error
        found.error(join_pointer(pointer, *error.absolute_path),
                    f"not a valid JSON Schema: {error.message}")
    kind = parameters.get("type")
    if kind is None:
        found.warning(pointer, 'the arguments are always an object; declare "type": "object"')
    elif kind not in ("object", ["object"]):
        found.error(join_pointer(pointer, "type"),
                    f'the arguments are always an object, so "type" must be "object", not {kind!r}')


def _escapes(path: Path, root: Path) -> bool:
    return not path.resolve().is_relative_to(root)


def check_entry(data: dict[str, Any], tools: list[Any], folder: Path, found: Collector) -> None:
    """Find the entry module and check that it exports every tool's `function` and
    every hook's function."""
    hooks = data.get("hooks") if isinstance(data.get("hooks"), dict) else {}
    providers = data.get("providers") if isinstance(data.get("providers"), list) else []
    exports = [(join_pointer("/tools", index, "function"), tool.get("function"))
               for index, tool in enumerate(tools) if isinstance(tool, dict)]
    exports += [(join_pointer("/hooks", event), function) for event, function in hooks.items()]
    exports += [(join_pointer("/providers", index, "function"), provider.get("function"))
                for index, provider in enumerate(providers) if isinstance(provider, dict)]
    root = folder.resolve()
    declared = data.get("entry")
    if declared is not None and not (_is_relative_path(declared) and runtime_for(declared)):
        return  # refused by the models
    pointer = "/entry" if declared is not None else ""
    names = (declared,) if declared is not None else entry_candidates(folder)
    present = [name for name in names if (folder / name).exists() or (folder / name).is_symlink()]
    if not present:
        if declared is not None:
            found.error(pointer, f"the entry module {declared} does not exist")
        elif exports:
            has = " and ".join(kind for kind, present in (("tools", tools), ("hooks", hooks),
                                                          ("providers", providers)) if present)
            found.error(pointer, f"the extension has {has} but no entry module: looked for "
                        f"{', '.join(names)}", locate_it=False)
        return
    entry = folder / present[0]
    locate_it = bool(pointer)
    if _escapes(entry, root):
        found.error(pointer, f"the entry module {present[0]} leads out of the extension folder",
                    locate_it=locate_it)
        return
    if not entry.is_file():
        found.error(pointer, f"the entry module {present[0]} is not a file", locate_it=locate_it)
        return
    if len(present) > 1 and present[0] in ENTRY_CANDIDATES:  # else deno.json or package.json chose
        found.warning(pointer, f"{' and '.join(present)} all exist; {present[0]} is the entry "
                      "module", locate_it=False)
    if not exports:
        return
    scan = scan_exports(entry, root)
    if scan.error:
        found.error(pointer, scan.error, locate_it=locate_it)
        return
    for field, function in exports:
        if not isinstance(function, str) or not re.fullmatch(EXPORT_NAME_PATTERN, function):
            continue
        if function in scan.names:
            continue
        if scan.complete:
            found.error(field, f"the entry module {present[0]} has no export named '{function}'")
        else:
            found.warning(field, f"could not confirm that {present[0]} exports '{function}': "
                          + "; ".join(scan.unresolved))


def _check_skill(folder: Path, pointer: str, label: str, root: Path, found: Collector) -> None:
    skill_file = folder / "SKILL.md"
    if not skill_file.is_file():
        found.error(pointer, f"the skill folder {label} has no SKILL.md")
        return
    try:
        matter = parse_front_matter(skill_file.read_text(encoding="utf-8", errors="replace"))
    except FrontMatterError as exc:
        found.error(pointer, f"{label}/SKILL.md: {exc}")
        matter = None
    missing = [key for key in ("name", "description") if matter is not None and not matter.text(key)]
    if missing:
        found.warning(pointer, f"{label}/SKILL.md should start with front matter giving "
                      f"{' and '.join(missing)}")
    seen = 0
    for directory, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in dirnames + filenames:
            seen += 1
            path = Path(directory, name)
            if path.is_symlink() and _escapes(path, root):
                inside = path.relative_to(folder).as_posix()
                found.error(pointer, f"{label}/{inside} is a link leading out of the "
                            "extension folder")
            if seen >= MAX_SKILL_FILES:
                return


def check_memories(memories: list[Any], folder: Path, found: Collector) -> None:
    """Check that each shipped memory exists inside the folder, in the shape of its kind."""
    root = folder.resolve()
    for index, memory in enumerate(memories):
        if not isinstance(memory, dict):
            continue
        kind, path = memory.get("kind"), memory.get("path")
        if kind not in ("knowledge", "skill") or not _is_relative_path(path):
            continue  # refused by the models
        pointer = join_pointer("/memories", index, "path")
        target = folder / path
        if not target.exists() and not target.is_symlink():
            found.error(pointer, f"{path} does not exist")
        elif _escapes(target, root):
            found.error(pointer, f"{path} leads out of the extension folder")
        elif kind == "knowledge":
            if not target.is_file():
                found.error(pointer, f"knowledge must be a single .md file; {path} is not a file")
            elif target.suffix.lower() != ".md":
                found.error(pointer, f"knowledge must be a .md file; {path} is not")
        elif not target.is_dir():
            found.error(pointer, f"a skill must be a folder holding SKILL.md; {path} is not a folder")
        else:
            _check_skill(target, pointer, path.rstrip("/\\"), root, found)


def check_content(data: dict[str, Any], folder: Path, found: Collector, *,
                  parameters: bool = True) -> bool:
    """Run every check of this module on a parsed manifest.

    Args:
        data: The parsed manifest (a JSON object).
        folder: The extension folder.
        found: Where problems go.
        parameters: Whether to check each tool's ``parameters`` against its JSON Schema
            meta-schema (``check_parameters``); False only for a manifest text whose
            parameters passed that check before with nothing to say (they depend on
            that text alone).

    Returns:
        Whether the parameter checks ran and found nothing, neither error nor warning.
    """
    tools = data.get("tools") if isinstance(data.get("tools"), list) else []
    memories = data.get("memories") if isinstance(data.get("memories"), list) else []
    providers = data.get("providers") if isinstance(data.get("providers"), list) else []
    check_ignored_keys(tools, memories, found, providers)
    check_workbench_templates(tools, providers, found)
    check_tool_names(tools, found)
    check_providers(providers, found)
    check_pages(data.get("pages") if isinstance(data.get("pages"), list) else [], tools, found)
    before = len(found.errors) + len(found.warnings)
    if parameters:
        for index, tool in enumerate(tools):
            if isinstance(tool, dict):
                check_parameters(tool.get("parameters"),
                                 join_pointer("/tools", index, "parameters"), found)
    clean = parameters and len(found.errors) + len(found.warnings) == before
    check_entry(data, tools, folder, found)
    check_memories(memories, folder, found)
    return clean
