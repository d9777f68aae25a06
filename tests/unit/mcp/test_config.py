"""Server entries in the config files: checked, masked, written with comments kept, and a
project's entries applying only in the version its owner trusted."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from workbench.config.files import Config
from workbench.config.home import Home
from workbench.config.trust import trust_project
from workbench.errors import ConfigError
from workbench.mcp.config import (MASK, ServerConfig, check_entry, load_servers, mask_args, mask_url,
                                  remove_server, update_server, write_server)


def entry(**values) -> dict:
    return {"command": "node", "args": ["server.js"], **values}


def test_a_stdio_entry_is_checked_and_read() -> None:
    server = check_entry("files", entry(env={"TOKEN": "t"}, timeout_ms=500, sandbox=True,
                                        grants=["read:/data", "net:api.example.com:443"]),
                         scope="global", origin="config.toml")
    assert server.transport == "stdio"
    assert server.args == ("server.js",) and server.env == {"TOKEN": "t"} and server.timeout_ms == 500
    assert server.grants == ("read:/data", "net:api.example.com:443")


@pytest.mark.parametrize("name, raw, problem", [
    ("bad name", entry(), "server name"),
    ("two__parts", entry(), "'__'"),
    ("x", {"args": ["a"]}, "either a command"),
    ("x", {"command": "node", "url": "http://h/mcp"}, "either a command"),
    ("x", entry(colour="red"), "unknown key 'colour'"),
    ("x", entry(args="server.js"), "'args' has the wrong type"),
    ("x", entry(env={"A": 1}), "values must be strings"),
    ("x", entry(timeout_ms=0), "greater than zero"),
    ("x", entry(timeout_ms=True), "wrong type"),
    ("x", {"url": "ftp://h/mcp"}, "http:// or https://"),
    ("x", {"url": "http://h/mcp", "sandbox": True}, "for stdio servers"),
    ("x", entry(grants=["fly:away"]), "KIND:VALUE"),
    ("x", entry(grants=["read:relative/path"]), "absolute path"),
])
def test_a_wrong_entry_is_refused_naming_the_server_and_the_problem(name, raw, problem) -> None:
    with pytest.raises(ConfigError) as caught:
        check_entry(name, raw, scope="global", origin="config.toml")
    assert problem in str(caught.value)
    assert "config.toml [mcp.servers." in str(caught.value)


def test_secrets_are_masked_wherever_an_entry_is_shown() -> None:
    server = ServerConfig(name="s", command="srv", args=("--port", "1", "--api-key", "k1", "--token=k2"),
                          env={"API_KEY": "k3"})
    shown = server.masked()
    assert shown["env"] == {"API_KEY": MASK}
    assert shown["args"] == ["--port", "1", "--api-key", MASK, f"--token={MASK}"]
    assert "k1" not in server.target() and "k2" not in server.target()
    web = ServerConfig(name="w", url="https://user:pw@host/mcp?key=k4&x=1",
                       headers={"Authorization": "Bearer k5"})
    text = str(web.masked()) + web.target()
    assert not any(secret in text for secret in ("pw", "k4", "k5"))
    assert mask_url("https://host/mcp") == "https://host/mcp"
    assert mask_args(["plain", "-v"]) == ["plain", "-v"]


def test_the_digest_follows_what_runs_not_which_tools_are_switched_off() -> None:
    one = ServerConfig(name="s", command="node", args=("a.js",))
    assert one.digest() == ServerConfig(name="s", command="node", args=("a.js",),
                                        disabled_tools=("x",)).digest()
    assert one.digest() != ServerConfig(name="s", command="node", args=("b.js",)).digest()
    assert one.digest() != ServerConfig(name="s", command="node", args=("a.js",), env={"K": "v"}).digest()


def test_writing_keeps_comments_makes_the_file_private_and_refuses_a_duplicate(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("# my settings\n[tools]\ntimeout_ms = 1000  # one second\n")
    os.chmod(path, 0o644)
    server = ServerConfig(name="time", command="mcp-server-time", env={"TZ": "UTC"})
    write_server(path, server)
    text = path.read_text()
    assert "# my settings" in text and "# one second" in text
    assert "[mcp.servers.time]" in text and 'env = {TZ = "UTC"}' in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(ConfigError, match="already"):
        write_server(path, server)
    write_server(path, ServerConfig(name="time", command="other"), replace=True)
    assert 'command = "other"' in path.read_text()
    update_server(path, "time", "disabled_tools", ["convert_time"])
    assert 'disabled_tools = ["convert_time"]' in path.read_text()
    with pytest.raises(ConfigError, match="no MCP server"):
        update_server(path, "nope", "disabled_tools", [])
    assert remove_server(path, "time") and not remove_server(path, "time")
    assert "mcp" not in path.read_text() and "# one second" in path.read_text()


def test_the_settings_reader_passes_over_server_tables_but_not_unknown_keys(home: Home, workdir: Path) -> None:
    home.config_file.write_text("[mcp]\ndisabled = [\"a\"]\n[mcp.servers.a]\ncommand = \"x\"\n")
    config = Config.load(home, workdir)
    assert config.get("mcp.disabled") == ["a"]
    home.config_file.write_text("[mcp]\nservers = 3\n")
    with pytest.raises(ConfigError, match="must be a table"):
        Config.load(home, workdir)
    home.config_file.write_text("[mcp]\nserver = {}\n")
    with pytest.raises(ConfigError, match="unknown setting 'mcp.server'"):
        Config.load(home, workdir)


def test_a_malformed_entry_is_reported_and_the_others_still_apply(home: Home, workdir: Path) -> None:
    home.config_file.write_text('[mcp.servers.good]\ncommand = "x"\n[mcp.servers.bad]\nurl = 3\n')
    found = load_servers(Config.load(home, workdir))
    assert list(found.servers) == ["good"]
    assert len(found.problems) == 1 and "'bad'" in found.problems[0]


def project(workdir: Path, text: str) -> Path:
    path = workdir / ".workbench" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def test_a_project_server_applies_only_in_the_version_its_owner_trusted(home: Home, workdir: Path) -> None:
    path = project(workdir, '[mcp.servers.proj]\ncommand = "srv"\nargs = ["--v1"]\n')
    found = load_servers(Config.load(home, workdir))
    assert found.servers == {} and list(found.pending) == ["proj"]

    trust_project(home, workdir)
    found = load_servers(Config.load(home, workdir))
    assert found.servers["proj"].args == ("--v1",) and found.servers["proj"].scope == "project"
    assert found.pending == {}

    # A changed entry waits for trust; the trusted one stays in force.
    path.write_text('[mcp.servers.proj]\ncommand = "srv"\nargs = ["--v2"]\n'
                    '[mcp.servers.extra]\ncommand = "other"\n')
    found = load_servers(Config.load(home, workdir))
    assert found.servers["proj"].args == ("--v1",)
    assert set(found.pending) == {"proj", "extra"}
    assert found.pending["proj"].args == ("--v2",)
    assert "trusted version from" in found.servers["proj"].origin

    trust_project(home, workdir)
    found = load_servers(Config.load(home, workdir))
    assert found.servers["proj"].args == ("--v2",) and set(found.servers) == {"proj", "extra"}


def test_a_trusted_project_entry_takes_the_place_of_a_global_one(home: Home, workdir: Path) -> None:
    home.config_file.write_text('[mcp.servers.same]\ncommand = "global-srv"\n')
    project(workdir, '[mcp.servers.same]\ncommand = "project-srv"\n')
    assert load_servers(Config.load(home, workdir)).servers["same"].command == "global-srv"
    trust_project(home, workdir)
    assert load_servers(Config.load(home, workdir)).servers["same"].command == "project-srv"
