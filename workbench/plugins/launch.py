"""How a plugin's process is started: in the sandbox a sandboxed MCP server gets
(``workbench.mcp.launcher``: user, mount, PID, network, IPC and UTS namespaces, a
private root, rlimits, Landlock, seccomp, no capabilities), with these grants alone:

- read: the installed plugin's folder, the project folder, the instance's ``run``
  folder (its secret and token files) and the Python SDK's package;
- write: the instance's data folder;
- net: ``127.0.0.1:<the Plugin API's port>``, through the host's allowlisting proxy
  (``HTTP_PROXY``); the network namespace holds nothing else, so no other host, port or
  loopback service of the host is reachable;
- the listening socket, made by the host on its own loopback, inherited: the host
  reaches the plugin there, and nothing else of the host's network is in the sandbox.

Where the sandbox cannot be made the start fails, naming why: a plugin never runs
unsandboxed.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from workbench.mcp.config import ServerConfig
from workbench.mcp.sandboxed import SYSTEM_PATH, prepare
from workbench.plugins.runtime import LaunchSpec
from workbench.sandbox.policy import Limits

PYTHON_WORDS = frozenset({"python", "python3"})
"""A ``run.command`` starting with one of these runs the workbench's own interpreter,
where the Python SDK (``workbench_plugin_sdk``) is installed."""


def sdk_folder() -> Path:
    import workbench_plugin_sdk

    return Path(workbench_plugin_sdk.__file__).resolve().parent


class SandboxedProcess:
    """The launcher's process, and the proxy that carries the plugin's calls out."""

    def __init__(self, popen: subprocess.Popen[bytes], proxy: Any | None) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.proxy = proxy

    def poll(self) -> int | None:
        code = self.popen.poll()
        if code is not None:
            self._close()
        return code

    def kill(self) -> None:
        self.popen.kill()

    def terminate(self) -> None:
        self.popen.terminate()

    def wait(self, timeout: float | None = None) -> int:
        code = self.popen.wait(timeout)
        self._close()
        return code

    def _close(self) -> None:
        if self.proxy is not None:
            self.proxy.close()
            self.proxy = None


class SandboxSpawner:
    """Starts plugins in the sandbox.

    Args:
        limits: The sandbox's resource limits for a long-lived process.
        pins: Where the pins of each plugin's granted paths are kept.
        startup_timeout_s: How long the sandbox may take to hand over its proxy socket.
    """

    def __init__(self, *, limits: Limits, pins: Path, startup_timeout_s: float = 10.0) -> None:
        self.limits = limits
        self.pins = pins
        self.startup_timeout_s = startup_timeout_s

    async def __call__(self, spec: LaunchSpec) -> SandboxedProcess:
        argv = list(spec.argv)
        if argv[0] in PYTHON_WORDS:
            argv[0] = sys.executable
        grants = [f"read:{spec.cwd}", f"read:{spec.project}", f"read:{spec.env['WORKBENCH_PLUGIN_SECRET_FILE'].rsplit('/', 1)[0]}",
                  f"read:{sdk_folder()}", f"write:{spec.data}"]
        if spec.api_port is not None:
            grants.append(f"net:127.0.0.1:{spec.api_port}")
        env = dict(spec.env, WORKBENCH_PLUGIN_LISTEN_FD=str(spec.listen_fd))
        env.pop("LISTEN_FDS", None)
        server = ServerConfig(name=env["WORKBENCH_PLUGIN_ID"], command=argv[0], args=tuple(argv[1:]),
                              env=env, cwd=str(spec.cwd), sandbox=True, grants=tuple(grants))
        launch = prepare(server, cwd=spec.cwd, env={"PATH": SYSTEM_PATH}, limits=self.limits,
                         pins_file=self.pins / f"{server.name}.json", inherit_fds=(spec.listen_fd,))
        spec.log.parent.mkdir(parents=True, exist_ok=True)
        with open(spec.log, "ab") as log:
            popen = subprocess.Popen(launch.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                     env={"PATH": SYSTEM_PATH, "LANG": "C.UTF-8"}, cwd="/",
                                     pass_fds=launch.pass_fds, start_new_session=True)
        launch.started()
        proxy = None
        if launch.control is not None:
            control = launch.control
            control.settimeout(self.startup_timeout_s)
            try:
                _, fds, _, _ = await asyncio.to_thread(socket.recv_fds, control, 16, 1)
            except OSError:
                fds = []
            finally:
                control.close()
            if not fds:
                popen.kill()
                popen.wait()
                raise RuntimeError(f"the sandbox did not set up the plugin's network (see {spec.log})")
            from workbench.sandbox.proxy import Proxy

            proxy = await Proxy.serve(socket.socket(fileno=fds[0]), launch.policy.net, per_call=False)
        return SandboxedProcess(popen, proxy)
