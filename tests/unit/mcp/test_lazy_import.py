"""``import mcp`` (about 600 ms) stays out of start-up: a host with servers whose tools are
cached registers them without importing the SDK or starting anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap


def test_a_host_with_cached_mcp_tools_does_not_import_the_sdk(tmp_path) -> None:
    code = textwrap.dedent("""
        import json, sys
        from pathlib import Path
        from workbench.config.home import Home
        from workbench.mcp.config import ServerConfig, write_server

        home = Home.resolve().ensure()
        server = ServerConfig(name="s", command="no-such-program")
        write_server(home.config_file, server)
        cache = home.cache_dir / "mcp" / f"s-{server.digest()[:16]}.json"
        cache.parent.mkdir(parents=True)
        cache.write_text(json.dumps({"tools": [{"name": "t", "inputSchema": {"type": "object"}}],
                                     "prompts": [], "resources": []}))
        import workbench.cli.mcp
        from workbench.core.host import Host

        host = Host.open(cwd=Path.cwd())
        names = [t.name for t in host.registry.available() if t.source == "mcp"]
        print(json.dumps({"names": names, "sdk": sorted(m for m in ("mcp", "mcp_types", "anyio")
                                                        if m in sys.modules),
                          "state": host.mcp.servers()[0]["state"]}))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "WORKBENCH_HOME": str(tmp_path / "home")}, timeout=60)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"names": ["mcp__s__t"], "sdk": [], "state": "stopped"}
