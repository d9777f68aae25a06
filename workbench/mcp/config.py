"""The MCP servers a person added: ``[mcp.servers.NAME]`` tables in the config files.

The global ``config.toml`` holds the servers a person added with ``workbench mcp add``;
a project's ``.workbench/config.toml`` may name servers too, and those count only in
the version its owner trusted (the trust record keeps a copy of that content): a
changed entry — command, arguments, URL, anything — waits for ``workbench trust``
while the trusted one stays in force. Secrets (environment values, header values)
stay in the file and are masked wherever an entry is shown.

Writes keep the file's comments (tomlkit) and are atomic. This module reads and
writes config files only through ``workbench.config``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import tomlkit

from workbench.config.document import atomic_write, parse, read_text
from workbench.config.files import Config, set_setting
from workbench.config.home import Home, find_project_config, project_config_path
from workbench.config.trust import check_trust
from workbench.errors import ConfigError
from workbench.mcp.naming import server_name_problem

Scope = Literal["global", "project"]

MASK = "••••"
GRANT_KINDS = ("read", "write", "run", "env", "net")
"""What a sandboxed stdio server may be granted, as for an extension's tool."""

_KEYS = {"command": str, "args": list, "env": dict, "cwd": str, "url": str, "headers": dict,
         "timeout_ms": int, "sandbox": bool, "grants": list, "disabled_tools": list}
_SECRET_ARG = re.compile(r"(key|token|secret|password|passwd|auth|credential)", re.IGNORECASE)


@dataclass(frozen=True)
class ServerConfig:
    """One server entry, checked.

    Attributes:
        name: The server's name (``mcp__NAME__tool``).
        scope: ``global`` (the person's config) or ``project`` (a trusted project's).
        origin: The file it came from (and which trusted version, for a project).
        command: For stdio: the program; None for an HTTP server.
        args: The program's arguments.
        env: Environment values given to a stdio server (secrets; masked when shown).
        cwd: The folder a stdio server starts in (the workbench's folder when None).
        url: For streamable HTTP: the endpoint.
        headers: HTTP headers sent with every request (secrets; masked when shown).
        timeout_ms: How long one of its tool calls may run (``tools.timeout_ms`` when None).
        sandbox: Run the stdio server in the sandbox, with ``grants`` only.
        grants: ``KIND:VALUE`` grants for the sandbox (read, write, run, env, net).
        disabled_tools: Its tools that are switched off everywhere.
    """

    name: str
    scope: Scope = "global"
    origin: str = ""
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    timeout_ms: int | None = None
    sandbox: bool = False
    grants: tuple[str, ...] = ()
    disabled_tools: tuple[str, ...] = ()

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "http" if self.url else "stdio"

    def entry(self) -> dict[str, Any]:
        """The TOML table of this server, as written (empty values left out)."""
        data = asdict(self)
        for key in ("name", "scope", "origin"):
            data.pop(key)
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in data.items()
                if v not in (None, (), {}, False)}

    def digest(self) -> str:
        """A digest of everything that decides what runs: a changed entry is another server."""
        blob = json.dumps({k: v for k, v in self.entry().items() if k != "disabled_tools"},
                          sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()

    def masked(self) -> dict[str, Any]:
        """The entry for showing: environment and header values, a URL's password and
        query values, and arguments after a flag that names a secret, replaced by ``••••``."""
        data = self.entry()
        if self.env:
            data["env"] = {key: MASK for key in self.env}
        if self.headers:
            data["headers"] = {key: MASK for key in self.headers}
        if self.url:
            data["url"] = mask_url(self.url)
        if self.args:
            data["args"] = mask_args(self.args)
        return data

    def target(self) -> str:
        """What it runs or reaches, masked: ``node server.js --port 1`` or the URL."""
        if self.url:
            return mask_url(self.url)
        return " ".join([self.command or "", *mask_args(self.args)]).strip()


def mask_url(url: str) -> str:
    """``url`` with its password and query values masked."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.replace(f":{parts.password}@", f":{MASK}@", 1)
    query = urlencode([(k, MASK) for k, _ in parse_qsl(parts.query, keep_blank_values=True)],
                      safe=MASK)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def mask_args(args: tuple[str, ...] | list[str]) -> list[str]:
    """Arguments with the value after (or in) a flag that names a secret masked."""
    shown, hide_next = [], False
    for arg in args:
        if hide_next:
            shown.append(MASK)
            hide_next = False
            continue
        flag, eq, _ = arg.partition("=")
        if flag.startswith("-") and _SECRET_ARG.search(flag):
            if eq:
                shown.append(f"{flag}={MASK}")
            else:
                shown.append(arg)
                hide_next = True
            continue
        shown.append(arg)
    return shown


def parse_grant(text: str) -> tuple[str, str]:
    """``KIND:VALUE`` as a pair.

    Raises:
        ConfigError: The kind is not one a server can be granted, or the value is empty.
    """
    kind, sep, value = text.partition(":")
    if kind not in GRANT_KINDS or not sep or not value:
        raise ConfigError(f"grant {text!r} must be KIND:VALUE with KIND one of "
                          f"{', '.join(GRANT_KINDS)} (e.g. read:/data, net:api.example.com:443)")
    if kind in ("read", "write") and not os.path.isabs(os.path.expanduser(value)):
        raise ConfigError(f"grant {text!r} must name an absolute path")
    return kind, value


def check_entry(name: str, raw: Any, *, scope: Scope, origin: str) -> ServerConfig:
    """Check one ``[mcp.servers.NAME]`` table.

    Raises:
        ConfigError: Naming the server, the file and the key that is wrong.
    """
    where = f"{origin} [mcp.servers.{name}]"
    problem = server_name_problem(name)
    if problem:
        raise ConfigError(f"MCP server {name!r}: {problem}", where=where)
    if not isinstance(raw, dict):
        raise ConfigError(f"MCP server {name!r} must be a table", where=where)
    values: dict[str, Any] = {}
    for key, value in raw.items():
        wanted = _KEYS.get(key)
        if wanted is None:
            raise ConfigError(f"MCP server {name!r}: unknown key {key!r} (known: "
                              f"{', '.join(_KEYS)})", where=where)
        if not isinstance(value, wanted) or (wanted is int and isinstance(value, bool)):
            raise ConfigError(f"MCP server {name!r}: {key!r} has the wrong type", where=where)
        if wanted is list and not all(isinstance(item, str) for item in value):
            raise ConfigError(f"MCP server {name!r}: {key!r} must be a list of strings", where=where)
        if wanted is dict and not all(isinstance(v, str) for v in value.values()):
            raise ConfigError(f"MCP server {name!r}: {key!r} values must be strings", where=where)
        values[key] = tuple(value) if wanted is list else dict(value) if wanted is dict else value
    if bool(values.get("command")) == bool(values.get("url")):
        raise ConfigError(f"MCP server {name!r} needs either a command (stdio) or a url "
                          "(streamable HTTP)", where=where)
    if values.get("url"):
        scheme = urlsplit(values["url"]).scheme
        if scheme not in ("http", "https"):
            raise ConfigError(f"MCP server {name!r}: url must be http:// or https://", where=where)
        if values.get("sandbox") or values.get("env") or values.get("args"):
            raise ConfigError(f"MCP server {name!r}: sandbox, env and args are for stdio servers",
                              where=where)
    if values.get("timeout_ms") is not None and values["timeout_ms"] <= 0:
        raise ConfigError(f"MCP server {name!r}: timeout_ms must be greater than zero", where=where)
    try:
        for grant in values.get("grants", ()):
            parse_grant(grant)
    except ConfigError as exc:
        raise ConfigError(f"MCP server {name!r}: {exc.message}", where=where) from None
    return ServerConfig(name=name, scope=scope, origin=origin, **values)


def entries_from_text(text: str, source: str) -> dict[str, Any]:
    """The raw ``[mcp.servers]`` tables of a config file's text, by name."""
    servers = parse(text, source).unwrap().get("mcp", {}).get("servers", {})
    if not isinstance(servers, dict):
        raise ConfigError("'mcp.servers' must be a table", where=source)
    return servers


def _read(text: str, source: str, scope: Scope) -> tuple[list[ServerConfig], list[str]]:
    found, problems = [], []
    for name, raw in entries_from_text(text, source).items():
        try:
            found.append(check_entry(name, raw, scope=scope, origin=source))
        except ConfigError as exc:
            problems.append(str(exc))
    return found, problems


@dataclass
class ServerList:
    """Every server that applies here, and what the person should know.

    Attributes:
        servers: By name; a trusted project's entry takes the place of a global one.
        pending: Project entries waiting for trust (new or changed since trusted).
        problems: Entries that could not be read, each naming its file.
    """

    servers: dict[str, ServerConfig] = field(default_factory=dict)
    pending: dict[str, ServerConfig] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def load_servers(config: Config) -> ServerList:
    """The servers of the global config and, in its trusted version, the project's.

    A malformed entry is left out and reported in ``problems``; the others still apply.
    """
    result = ServerList()
    global_file = config.home.config_file
    if global_file.exists():
        found, problems = _read(read_text(global_file), str(global_file), "global")
        result.servers.update((s.name, s) for s in found)
        result.problems += problems
    record = config.trust_record
    trusted: dict[str, ServerConfig] = {}
    if config.project_file is not None and config.project_state in ("trusted", "changed") and record:
        origin = (f"{config.project_file} (trusted)" if config.project_state == "trusted"
                  else f"{config.project_file} (trusted version from {record.trusted_at})")
        found, problems = _read(record.content, origin, "project")
        trusted = {s.name: s for s in found}
        result.servers.update(trusted)
        result.problems += problems
    if config.project_file is not None and config.project_state != "trusted":
        try:
            current, _ = _read(read_text(config.project_file), str(config.project_file), "project")
        except ConfigError as exc:
            result.problems.append(str(exc))
            current = []
        for server in current:
            before = trusted.get(server.name)
            if before is None or before.digest() != server.digest():
                result.pending[server.name] = server
    return result


def config_path(home: Home, cwd: Path, scope: Scope) -> Path:
    """The file a ``scope`` entry is written to."""
    if scope == "global":
        return home.config_file
    cwd = Path(os.path.abspath(cwd))
    return find_project_config(cwd, home) or project_config_path(cwd)


def write_server(path: Path, server: ServerConfig, *, replace: bool = False) -> None:
    """Add ``server`` as ``[mcp.servers.NAME]`` to ``path``, keeping its comments; the
    file is made private to its owner, since the entry may hold secrets.

    Raises:
        ConfigError: The file cannot be parsed, or a server of that name is there
            (unless ``replace``).
    """
    document = parse(read_text(path), str(path)) if path.exists() else tomlkit.document()
    mcp = document.setdefault("mcp", tomlkit.table())
    servers = mcp.setdefault("servers", tomlkit.table(is_super_table=True))
    if server.name in servers and not replace:
        raise ConfigError(f"an MCP server named {server.name!r} is already in {path}; "
                          f"`workbench mcp rm {server.name}` first")
    table = tomlkit.table()
    for key, value in server.entry().items():
        if isinstance(value, dict):
            inline = tomlkit.inline_table()
            inline.update(value)
            table[key] = inline
        else:
            table[key] = value
    servers[server.name] = table
    atomic_write(path, tomlkit.dumps(document).encode("utf-8"), mode=0o600)
    os.chmod(path, 0o600)


def remove_server(path: Path, name: str) -> bool:
    """Remove ``[mcp.servers.NAME]`` from ``path``; returns whether it was there."""
    if not path.exists():
        return False
    document = parse(read_text(path), str(path))
    servers = document.get("mcp", {}).get("servers", {})
    if name not in servers:
        return False
    del servers[name]
    if not servers:
        del document["mcp"]["servers"]
        if not document["mcp"]:
            del document["mcp"]
    atomic_write(path, tomlkit.dumps(document).encode("utf-8"))
    return True


def update_server(path: Path, name: str, key: str, value: Any) -> None:
    """Set (or, for None, remove) one key of an existing ``[mcp.servers.NAME]``.

    Raises:
        ConfigError: No such server in ``path``.
    """
    document = parse(read_text(path), str(path)) if path.exists() else tomlkit.document()
    servers = document.get("mcp", {}).get("servers", {})
    if name not in servers:
        raise ConfigError(f"no MCP server named {name!r} in {path}")
    if value is None:
        servers[name].pop(key, None)
    else:
        servers[name][key] = value
    atomic_write(path, tomlkit.dumps(document).encode("utf-8"))


def add_entry(home: Home, cwd: Path, server: ServerConfig, scope: Scope,
              replace: bool = False) -> Path:
    """Check ``server`` and write it to the ``scope`` config file; returns the file.

    Raises:
        ConfigError: The entry is not valid, or a server of that name is there.
    """
    check_entry(server.name, server.entry(), scope=scope, origin="the command line")
    path = config_path(home, cwd, scope)
    write_server(path, server, replace=replace)
    return path


def entry_file(home: Home, project_file: Path | None, server: ServerConfig) -> Path:
    """The file ``server``'s entry lives in."""
    if server.scope == "global" or project_file is None:
        return home.config_file
    return project_file


def set_disabled(home: Home, cwd: Path, disabled: set[str], name: str, off: bool) -> None:
    """Add ``name`` to (or take it from) ``mcp.disabled`` in the person's own config."""
    wanted = sorted(disabled | {name}) if off else sorted(disabled - {name})
    set_setting(home, cwd, "mcp.disabled", wanted, "global")


def trust_notice(home: Home, written: Path | None) -> str | None:
    """A notice when ``written`` is a project config that now waits for trust."""
    if written is None or written == home.config_file:
        return None
    if check_trust(home, written.parent.parent, written.read_bytes()).state == "trusted":
        return None
    return (f"{written} is not trusted in this version, so the change does not apply yet; "
            "run `workbench trust` to apply it")
