"""Sandboxed MCP servers on the interpreters people run them with load their native
modules: the libraries those modules link against are bound executable over the
worker root's ``noexec`` library folders, whatever prefix the interpreter lives in (a
system ``/usr``, pyenv, a venv) — and a program that lives in a library folder still
cannot be run through the loader."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from workbench.config.home import Home
from workbench.core.host import Host
from workbench.mcp.config import ServerConfig, write_server

ROOT = Path(__file__).resolve().parents[2]
VENV_PYTHON = ROOT / ".mcp-servers" / "venv" / "bin" / "python"

# A stdlib-only server (raw JSON-RPC over stdin/stdout) whose one tool imports the
# standard library's native modules and tries the loader on a library-folder program.
SERVER = r'''
import json, subprocess, sys
def modules():
    import ssl, sqlite3, hashlib, zlib, ctypes, _decimal
    return {"ssl": ssl.OPENSSL_VERSION, "sqlite": sqlite3.sqlite_version,
            "sha": hashlib.sha256(b"x").hexdigest()[:8], "zlib": zlib.ZLIB_VERSION}
def loader(program):
    import glob
    loaders = glob.glob("/lib64/ld-linux*.so*") + glob.glob("/lib/*-linux-gnu*/ld-linux*.so*")
    try:
        done = subprocess.run([loaders[0], program, "--version"], capture_output=True)
        return {"status": done.returncode, "out": done.stdout.decode(errors="replace")[:80]}
    except OSError as exc:
        return {"refused": exc.strerror}
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        result = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "natives", "version": "1.0.0"}}
    elif m["method"] == "tools/list":
        schema = {"type": "object", "additionalProperties": True}
        result = {"tools": [{"name": "modules", "description": "m", "inputSchema": schema},
                            {"name": "loader", "description": "l", "inputSchema": schema}]}
    elif m["method"] == "tools/call":
        args = m["params"].get("arguments") or {}
        found = modules() if m["params"]["name"] == "modules" else loader(args["program"])
        result = {"content": [{"type": "text", "text": json.dumps(found)}]}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": result}) + "\n")
    sys.stdout.flush()
'''

INTERPRETERS = {"system": "/usr/bin/python3", "venv": str(VENV_PYTHON)}


def library_program() -> str:
    """An ELF program that lives inside a library folder on this machine."""
    for candidate in ("/usr/lib/git-core/git", "/usr/lib/openssh/ssh-keysign"):
        if os.path.isfile(candidate):
            return candidate
    raise AssertionError("no program inside a library folder on this machine to try")


@pytest.mark.parametrize("kind", sorted(INTERPRETERS))
async def test_a_sandboxed_server_loads_its_interpreters_native_modules(kind: str, home: Home,
                                                                       workdir: Path) -> None:
    python = INTERPRETERS[kind]
    assert os.path.exists(python), f"{python} is needed for this test"
    server = ServerConfig(name="natives", command=python, args=("-c", SERVER), sandbox=True,
                          grants=(f"run:{shutil.which('true') or '/bin/true'}",))
    write_server(home.config_file, server, replace=True)
    with open(home.config_file, "a") as handle:
        handle.write("[sandbox]\nper_process_memory = true\n")
    host = Host.open(cwd=workdir)
    try:
        outcome = await host.tools.call("mcp__natives__modules", {})
        assert outcome.ok, outcome.error
        found = json.loads(outcome.result["content"][0]["text"])
        assert found["ssl"].startswith("OpenSSL") and found["sqlite"] and found["zlib"]
        assert found["sha"] == "2d711642"
        tried = await host.tools.call("mcp__natives__loader", {"program": library_program()})
        assert tried.ok, tried.error
        ran = json.loads(tried.result["content"][0]["text"])
        assert ran.get("refused") or ran["status"] != 0, ran
        assert "git version" not in ran.get("out", "")
    finally:
        await host.aclose()
