"""``plugin.json``: a plugin's manifest, read and checked before anything of it runs.

Written as JSON with comments and trailing commas (``jsonc.py``). Every field the
Loop-style contract has is checked here — the shape of each, names a terminal can show
without tricks (no controls, bidi overrides or zero-width characters), paths that stay
inside the plugin's folder, the capability each optional part needs, the JSON Schemas
of tools and settings, and every setting's default against its own schema — and every
problem is reported at once, each with the field's JSON pointer and the line it is on.

The Workbench addition: ``run.command``, the argv that starts a process plugin from its
folder (an image carries its own entrypoint; a folder does not). A manifest without it
is a container plugin, which this workbench cannot run yet (``runnable`` says why).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from workbench.errors import ExitCode, WorkbenchError
from workbench.plugins.jsonc import loads

MANIFEST_NAME = "plugin.json"
MAX_MANIFEST_BYTES = 256 * 1024
MAX_TEXT = 200
MAX_DESCRIPTION = 2000
ID = re.compile(r"[a-z][a-z0-9-]{1,31}")
TOOL_NAME = re.compile(r"[a-z][a-z0-9_]{0,47}")
ITEM_ID = re.compile(r"[a-z][a-z0-9_-]{0,31}")
VERSION = re.compile(r"\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]{1,32})?")
MEMORY = re.compile(r"[1-9]\d{0,5}[kmg]")
INTERVAL = re.compile(r"[1-9]\d{0,6}[smhd]")
CRON_FIELD = re.compile(r"[0-9*,/\-A-Za-z]{1,40}")

CAPABILITIES: dict[str, str] = {
    "agent.readonly": "start read-only agent runs",
    "agent.write": "start agent runs that may change files",
    "files.read": "read the project's files",
    "schedule": "run actions on a schedule",
    "events.subscribe": "receive the workbench's events",
    "ui.panel": "show panes",
    "ui.notification.card": "post cards to the notification drawer",
    "ui.composer_switch": "add switches to the chat's composer",
    "notifications": "post notifications",
    "live.control": "drive the chat's live session",
}
"""Every capability a plugin may ask for, and what it lets the plugin do, as install
shows it."""

TOP_LEVEL = frozenset({"id", "name", "version", "api", "description", "capabilities", "agents",
                       "tools", "actions", "settings", "ui", "events", "events_start",
                       "thread_events", "live", "resources", "gate", "run"})
SETTING_TYPES = frozenset({"string", "integer", "number", "boolean", "array", "object"})
SETTING_KEYWORDS = frozenset({"type", "title", "description", "default", "enum", "minimum",
                              "maximum", "pattern", "items", "properties", "additionalProperties"})
HIDDEN = frozenset({"Cf", "Cc", "Co", "Cs", "Cn", "Zl", "Zp"})
"""Unicode categories a name may not hold: format characters (bidi overrides and
isolates, zero-width joiners and spaces), controls, private use, unassigned."""


class PluginManifestError(WorkbenchError):
    """A manifest that cannot be used; ``problems`` lists every one as ``where: what``."""

    def __init__(self, problems: list[str], *, where: str) -> None:
        self.problems = problems
        super().__init__("invalid plugin manifest:\n  " + "\n  ".join(problems), where=where,
                         exit_code=ExitCode.USAGE)


@dataclass(frozen=True)
class PluginTool:
    """One tool a plugin serves at ``POST /tools/{name}``."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None


@dataclass(frozen=True)
class PluginManifest:
    """A checked ``plugin.json``. ``raw`` keeps every field as written."""

    id: str
    name: str
    version: str
    capabilities: tuple[str, ...]
    tools: tuple[PluginTool, ...]
    actions: tuple[str, ...]
    settings: dict[str, dict[str, Any]]
    run_command: tuple[str, ...] | None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def runnable(self) -> str | None:
        """Why this workbench cannot run the plugin, or None when it can."""
        if self.run_command is None:
            return ("it names no `run.command`: a container plugin, which needs a container "
                    "engine this workbench does not drive yet")
        return None

    def tool(self, name: str) -> PluginTool | None:
        return next((t for t in self.tools if t.name == name), None)

    def agent(self, agent_id: str) -> PluginAgent | None:
        """The agent ``agent_id`` the manifest declares (checked at install)."""
        for item in self.raw.get("agents") or []:
            if isinstance(item, dict) and item.get("id") == agent_id:
                return PluginAgent(agent_id, bool(item.get("read_only", False)),
                                   tuple(str(t) for t in item.get("tools") or []))
        return None


@dataclass(frozen=True)
class PluginAgent:
    """One of a plugin's agents: whether it runs read-only, and the tools it is given."""

    id: str
    read_only: bool
    tools: tuple[str, ...]


class _Check:
    def __init__(self, lines: dict[str, int], where: str) -> None:
        self.lines = lines
        self.where = where
        self.problems: list[str] = []

    def bad(self, pointer: str, message: str) -> None:
        line = self.lines.get(pointer)
        while line is None and pointer:
            pointer = pointer.rsplit("/", 1)[0]
            line = self.lines.get(pointer)
        self.problems.append(f"line {line or 1}: {pointer or '/'}: {message}")

    def of(self, value: Any, kind: type | tuple[type, ...], pointer: str, what: str) -> bool:
        if isinstance(value, bool) and kind in (int, float, (int, float)):
            ok = False
        else:
            ok = isinstance(value, kind)
        if not ok:
            self.bad(pointer, f"must be {what}")
        return ok

    def text(self, value: Any, pointer: str, *, limit: int = MAX_TEXT, empty: bool = False) -> bool:
        if not self.of(value, str, pointer, "a string"):
            return False
        if not value and not empty:
            self.bad(pointer, "must not be empty")
            return False
        if len(value) > limit:
            self.bad(pointer, f"is {len(value)} characters long; at most {limit}")
            return False
        hidden = sorted({f"U+{ord(c):04X}" for c in value
                         if unicodedata.category(c) in HIDDEN and c not in "\n\t"})
        if hidden:
            self.bad(pointer, "holds characters a terminal would hide or reorder ("
                     + ", ".join(hidden[:5]) + ")")
            return False
        return True

    def name(self, value: Any, pattern: re.Pattern[str], pointer: str) -> bool:
        if not self.of(value, str, pointer, "a string"):
            return False
        if pattern.fullmatch(value) is None:
            shown = value[:40].encode("unicode_escape").decode("ascii")
            self.bad(pointer, f"{shown!r} does not match {pattern.pattern}")
            return False
        return True

    def path(self, value: Any, pointer: str, *, suffix: str | None = None) -> None:
        if not self.text(value, pointer, limit=240):
            return
        posix = PurePosixPath(value)
        if posix.is_absolute() or ".." in posix.parts or "\\" in value or posix.parts[:1] != ("ui",):
            self.bad(pointer, "must be a path under ui/ inside the plugin's folder (no '..')")
        elif suffix and posix.suffix != suffix:
            self.bad(pointer, f"must be a {suffix} file")

    def needs(self, capabilities: set[str], capability: str, pointer: str) -> None:
        if capability not in capabilities:
            self.bad(pointer, f"needs {capability!r} in capabilities")


def _check_schema(check: _Check, schema: Any, pointer: str) -> bool:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    if not check.of(schema, dict, pointer, "a JSON Schema object"):
        return False
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        check.bad(pointer, f"not a valid JSON Schema: {exc.message[:200]}")
        return False
    if schema.get("type") != "object":
        check.bad(pointer + "/type", 'must be "object"')
        return False
    return True


def _check_setting(check: _Check, name: str, schema: Any, pointer: str) -> None:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    check.name(name, ITEM_ID, pointer)
    if not check.of(schema, dict, pointer, "an object (a setting's schema)"):
        return
    for key in schema:
        if key not in SETTING_KEYWORDS:
            check.bad(f"{pointer}/{key}", "is not a setting keyword (" + ", ".join(sorted(SETTING_KEYWORDS)) + ")")
    if schema.get("type") not in SETTING_TYPES:
        check.bad(f"{pointer}/type", "must be one of " + ", ".join(sorted(SETTING_TYPES)))
        return
    for key in ("title", "description"):
        if key in schema:
            check.text(schema[key], f"{pointer}/{key}", limit=MAX_DESCRIPTION)
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        check.bad(pointer, f"not a valid schema: {exc.message[:200]}")
        return
    if "default" in schema:
        errors = sorted(Draft202012Validator(schema).iter_errors(schema["default"]), key=str)
        if errors:
            check.bad(f"{pointer}/default", f"does not match its own schema: {errors[0].message[:200]}")


def _check_schedule(check: _Check, schedule: Any, pointer: str) -> None:
    if not check.of(schedule, dict, pointer, "an object with type and schedule"):
        return
    kind, value = schedule.get("type"), schedule.get("schedule")
    if kind == "cron":
        if not isinstance(value, str) or len(value.split()) != 5 or not all(
                CRON_FIELD.fullmatch(part) for part in value.split()):
            check.bad(f"{pointer}/schedule", "must be a cron line of five fields (\"0 9 * * *\")")
    elif kind == "interval":
        if not isinstance(value, str) or INTERVAL.fullmatch(value) is None:
            check.bad(f"{pointer}/schedule", 'must be an interval such as "15m", "2h" or "1d"')
    else:
        check.bad(f"{pointer}/type", 'must be "cron" or "interval"')
    for key in schedule:
        if key not in ("type", "schedule"):
            check.bad(f"{pointer}/{key}", "is not a field of a schedule")


def _items(check: _Check, value: Any, pointer: str, what: str) -> list[tuple[str, Any]]:
    if value is None:
        return []
    if not check.of(value, list, pointer, f"a list of {what}"):
        return []
    if len(value) > 64:
        check.bad(pointer, f"holds {len(value)} {what}; at most 64")
        return []
    return [(f"{pointer}/{i}", item) for i, item in enumerate(value)]


def _unique(check: _Check, names: list[tuple[str, Any]]) -> None:
    seen: set[Any] = set()
    for pointer, name in names:
        if isinstance(name, str) and name in seen:
            check.bad(pointer, f"{name!r} is given twice")
        seen.add(name if isinstance(name, str) else id(name))


def _check_ui(check: _Check, ui: Any, caps: set[str]) -> None:
    if not check.of(ui, dict, "/ui", "an object"):
        return
    for key in ui:
        if key not in ("panels", "cards", "composer_switches"):
            check.bad(f"/ui/{key}", "is not a field of ui (panels, cards, composer_switches)")
    for part, capability in (("panels", "ui.panel"), ("cards", "ui.notification.card"),
                             ("composer_switches", "ui.composer_switch")):
        items = _items(check, ui.get(part), f"/ui/{part}", part)
        if items:
            check.needs(caps, capability, f"/ui/{part}")
        if part == "composer_switches" and len(items) > 4:
            check.bad(f"/ui/{part}", f"holds {len(items)} switches; at most 4")
        ids = []
        for pointer, item in items:
            if not check.of(item, dict, pointer, "an object"):
                continue
            check.name(item.get("id"), ITEM_ID, f"{pointer}/id")
            ids.append((f"{pointer}/id", item.get("id")))
            if part == "panels":
                check.text(item.get("label"), f"{pointer}/label", limit=40)
                check.path(item.get("entry"), f"{pointer}/entry")
                if "singleton" in item:
                    check.of(item["singleton"], bool, f"{pointer}/singleton", "true or false")
            elif part == "cards":
                check.path(item.get("entry"), f"{pointer}/entry")
            else:
                check.text(item.get("label"), f"{pointer}/label", limit=24)
                check.path(item.get("icon"), f"{pointer}/icon", suffix=".svg")
                if "title" in item:
                    check.text(item["title"], f"{pointer}/title", limit=200)
        _unique(check, ids)


def _check_gate(check: _Check, gate: Any) -> None:
    if not check.of(gate, dict, "/gate", "an object"):
        return
    for key in gate:
        if key not in ("files", "commands"):
            check.bad(f"/gate/{key}", "is not a field of gate (files, commands)")
    for part, listed in (("files", "paths"), ("commands", "commands")):
        for pointer, rule in _items(check, gate.get(part), f"/gate/{part}", "rules"):
            if not check.of(rule, dict, pointer, "an object"):
                continue
            decision = rule.get("decision")
            if decision == "approve":
                check.bad(f"{pointer}/decision", "approve is refused at install: nobody is there "
                          "to answer; a rule may only allow or deny")
            elif decision not in ("allow", "deny"):
                check.bad(f"{pointer}/decision", 'must be "allow" or "deny"')
            for sub, item in _items(check, rule.get(listed), f"{pointer}/{listed}", listed):
                check.text(item, sub, limit=240)
            if part == "files":
                for sub, item in _items(check, rule.get("operations"), f"{pointer}/operations", "operations"):
                    if item not in ("read", "write", "create", "delete", "exec", "stat"):
                        check.bad(sub, "must be read, write, create, delete, exec or stat")


def _check_top(data: dict[str, Any], check: _Check) -> set[str]:
    for key in data:
        if key not in TOP_LEVEL:
            check.bad(f"/{key}", "is not a field of plugin.json")
    check.name(data.get("id"), ID, "/id")
    check.text(data.get("name"), "/name", limit=64)
    if check.of(data.get("version"), str, "/version", "a string") and VERSION.fullmatch(data["version"]) is None:
        check.bad("/version", "must be a version such as 0.1.0")
    if data.get("api") != "1":
        check.bad("/api", 'must be "1" (the contract this workbench speaks)')
    if "description" in data:
        check.text(data["description"], "/description", limit=MAX_DESCRIPTION)
    caps: set[str] = set()
    for pointer, cap in _items(check, data.get("capabilities", []), "/capabilities", "capabilities"):
        if cap not in CAPABILITIES:
            shown = str(cap)[:40].encode("unicode_escape").decode("ascii")
            check.bad(pointer, f"{shown!r} is not a capability (" + ", ".join(CAPABILITIES) + ")")
        else:
            caps.add(cap)
    return caps


def _check_tools(data: dict[str, Any], check: _Check) -> set[str]:
    tool_names: set[str] = set()
    tool_items = _items(check, data.get("tools"), "/tools", "tools")
    for pointer, tool in tool_items:
        if not check.of(tool, dict, pointer, "an object"):
            continue
        for key in tool:
            if key not in ("name", "description", "input_schema", "output_schema"):
                check.bad(f"{pointer}/{key}", "is not a field of a tool")
        if check.name(tool.get("name"), TOOL_NAME, f"{pointer}/name"):
            tool_names.add(tool["name"])
        check.text(tool.get("description"), f"{pointer}/description", limit=MAX_DESCRIPTION)
        _check_schema(check, tool.get("input_schema"), f"{pointer}/input_schema")
        if "output_schema" in tool:
            _check_schema(check, tool["output_schema"], f"{pointer}/output_schema")
    _unique(check, [(f"{p}/name", t.get("name")) for p, t in tool_items if isinstance(t, dict)])
    return tool_names


def _check_agents_actions(data: dict[str, Any], check: _Check, caps: set[str], tool_names: set[str]) -> None:
    agent_items = _items(check, data.get("agents"), "/agents", "agents")
    for pointer, agent in agent_items:
        if not check.of(agent, dict, pointer, "an object"):
            continue
        check.name(agent.get("id"), ITEM_ID, f"{pointer}/id")
        read_only = agent.get("read_only", False)
        if check.of(read_only, bool, f"{pointer}/read_only", "true or false"):
            check.needs(caps, "agent.readonly" if read_only else "agent.write", pointer)
        for sub, name in _items(check, agent.get("tools", []), f"{pointer}/tools", "tools"):
            if name not in tool_names:
                check.bad(sub, f"{str(name)[:40]!r} is not one of the manifest's tools")
    _unique(check, [(f"{p}/id", a.get("id")) for p, a in agent_items if isinstance(a, dict)])
    action_items = _items(check, data.get("actions"), "/actions", "actions")
    for pointer, action in action_items:
        if not check.of(action, dict, pointer, "an object"):
            continue
        check.name(action.get("id"), ITEM_ID, f"{pointer}/id")
        if "default_schedule" in action:
            check.needs(caps, "schedule", f"{pointer}/default_schedule")
            _check_schedule(check, action["default_schedule"], f"{pointer}/default_schedule")
    _unique(check, [(f"{p}/id", a.get("id")) for p, a in action_items if isinstance(a, dict)])


def _check_settings(data: dict[str, Any], check: _Check) -> dict[str, Any]:
    settings = data.get("settings", {})
    if not check.of(settings, dict, "/settings", "an object of settings"):
        return {}
    if len(settings) > 64:
        check.bad("/settings", f"declares {len(settings)} settings; at most 64")
        return {}
    for name, schema in settings.items():
        _check_setting(check, name, schema, f"/settings/{name}")
    return settings


def _check_events(data: dict[str, Any], check: _Check, caps: set[str], settings: dict[str, Any]) -> None:
    events = _items(check, data.get("events"), "/events", "events")
    if events:
        check.needs(caps, "events.subscribe", "/events")
    for pointer, event in events:
        if check.of(event, str, pointer, "an event name") and re.fullmatch(r"[a-z][a-z0-9_.]{0,63}", event) is None:
            check.bad(pointer, "is not an event name")
    ui: dict[str, Any] = data["ui"] if isinstance(data.get("ui"), dict) else {}
    listed = ui.get("composer_switches")
    switches = [s.get("id") for s in listed if isinstance(s, dict)] if isinstance(listed, list) else []
    if "events_start" in data and check.of(data["events_start"], dict, "/events_start", "an object"):
        for key, value in data["events_start"].items():
            if key not in ("settings", "switches"):
                check.bad(f"/events_start/{key}", "must be settings or switches")
                continue
            for pointer, name in _items(check, value, f"/events_start/{key}", key):
                if key == "settings":
                    schema = settings.get(name) if isinstance(name, str) else None
                    if not isinstance(schema, dict) or schema.get("type") != "boolean":
                        check.bad(pointer, "must name a boolean setting of the manifest")
                elif name not in switches:
                    check.bad(pointer, "must name a composer switch of the manifest")
    if "thread_events" in data and data["thread_events"] not in ("thread", "channel", "both"):
        check.bad("/thread_events", 'must be "thread", "channel" or "both"')


def _check_live_resources(data: dict[str, Any], check: _Check, caps: set[str]) -> None:
    if "live" in data:
        check.needs(caps, "live.control", "/live")
        if check.of(data["live"], dict, "/live", "an object"):
            for key, value in data["live"].items():
                if key not in ("control", "messages"):
                    check.bad(f"/live/{key}", "must be control or messages")
                for pointer, item in _items(check, value, f"/live/{key}", key):
                    check.name(item, ITEM_ID, pointer)
    if "resources" in data and check.of(data["resources"], dict, "/resources", "an object"):
        for key, value in data["resources"].items():
            if key == "memory":
                if not isinstance(value, str) or MEMORY.fullmatch(value) is None:
                    check.bad("/resources/memory", 'must be a size such as "128m"')
            elif key == "cpus":
                if check.of(value, (int, float), "/resources/cpus", "a number") and not 0 < value <= 64:
                    check.bad("/resources/cpus", "must be above 0 and at most 64")
            else:
                check.bad(f"/resources/{key}", "must be memory or cpus")


def _check_run(data: dict[str, Any], check: _Check) -> None:
    if "run" not in data or not check.of(data["run"], dict, "/run", "an object with command"):
        return
    for key in data["run"]:
        if key != "command":
            check.bad(f"/run/{key}", "is not a field of run (command)")
    command = data["run"].get("command")
    if check.of(command, list, "/run/command", "a list of strings (the argv)"):
        if not command or len(command) > 64:
            check.bad("/run/command", "must hold 1 to 64 words")
        for pointer, word in _items(check, command, "/run/command", "words"):
            check.text(word, pointer, limit=1000)


def _check(data: Any, check: _Check) -> None:
    if not check.of(data, dict, "", "a JSON object"):
        return
    caps = _check_top(data, check)
    tool_names = _check_tools(data, check)
    _check_agents_actions(data, check, caps, tool_names)
    settings = _check_settings(data, check)
    if "ui" in data:
        _check_ui(check, data["ui"], caps)
    _check_events(data, check, caps, settings)
    _check_live_resources(data, check, caps)
    if "gate" in data:
        _check_gate(check, data["gate"])
    _check_run(data, check)


def parse(text: str, where: str) -> PluginManifest:
    """Check a manifest's text.

    Raises:
        PluginManifestError: Every problem found, each with its line and field.
        WorkbenchError: Not JSON with comments (line and column given).
    """
    data, lines = loads(text, where)
    check = _Check(lines, where)
    _check(data, check)
    if check.problems:
        raise PluginManifestError(check.problems, where=where)
    tools = tuple(PluginTool(t["name"], t["description"], t["input_schema"], t.get("output_schema"))
                  for t in data.get("tools") or [])
    run = data.get("run")
    return PluginManifest(id=data["id"], name=data["name"], version=data["version"],
                          capabilities=tuple(data.get("capabilities", [])), tools=tools,
                          actions=tuple(a["id"] for a in data.get("actions") or []),
                          settings=dict(data.get("settings", {})),
                          run_command=tuple(run["command"]) if run else None, raw=data)


def read(folder: Path) -> PluginManifest:
    """Read and check ``plugin.json`` of a plugin's folder.

    Raises:
        PluginManifestError, WorkbenchError: As ``parse``; or the file is missing, not a
            regular file, larger than ``MAX_MANIFEST_BYTES`` or not UTF-8.
    """
    from workbench.jsontext import decode, read_file

    path = folder / MANIFEST_NAME
    try:
        data = read_file(path, max_bytes=MAX_MANIFEST_BYTES)
    except FileNotFoundError:
        raise WorkbenchError(f"no {MANIFEST_NAME} in this folder", where=str(folder),
                             exit_code=ExitCode.USAGE) from None
    except OSError as exc:
        raise WorkbenchError(f"cannot read {MANIFEST_NAME}: {exc.strerror or exc}", where=str(path),
                             exit_code=ExitCode.USAGE) from None
    return parse(decode(data, str(path)), str(path))
