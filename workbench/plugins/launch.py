"""How a plugin's process is started: in the sandbox a sandboxed MCP server gets
(``workbench.mcp.launcher``: user, mount, PID, network, IPC and UTS namespaces, a
private root, rlimits, Landlock, seccomp, no capabilities), with these grants alone:

- read: the installed plugin's folder, the project folder, the instance's ``run``
  folder (its secret and token files), the Python SDK's package and its data folder;
- write: the instance's data folder;
- as the manifest's ``gate`` narrows them (``gate.py``, which logs every start's
  decisions to the plugin's audit folder);
- net: ``127.0.0.1:<the Plugin API's port>``, through the host's allowlisting proxy
  (``HTTP_PROXY``); the network namespace holds nothing else, so no other host, port or
  loopback service of the host is reachable;
- bind: the port it is given (``$LOOP_PLUGIN_PORT``) alone, on the sandbox's own
  loopback (Landlock refuses any other). The plugin binds it itself, as the seed says;
  the host reaches it through the sandbox's dialer (``sandbox.process.dialer``), which
  connects there inside the sandbox's network namespace and hands the host the
  connected socket, so nothing of the host's network is in the sandbox.

Its memory (the manifest's ``resources.memory``, else the sandbox's default) bounds the
plugin's processes together through a memory cgroup where one can be made (and its
rlimits in any case). Where the sandbox cannot be made the start fails, naming why: a
plugin never runs unsandboxed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
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


class Dialer:
    """The host's end of a sandbox's dialer: each call a socket connected to the
    plugin's port inside the sandbox."""

    def __init__(self, sock: socket.socket, timeout_s: float = 5.0) -> None:
        self.sock = sock
        self.timeout_s = timeout_s
        self._lock = asyncio.Lock()

    async def __call__(self) -> socket.socket:
        """A connected socket.

        Raises:
            ConnectionRefusedError: Nothing accepts on the port (or the sandbox ended).
        """
        async with self._lock:
            return await asyncio.to_thread(self._dial)

    def _dial(self) -> socket.socket:
        if self.sock.fileno() < 0:
            raise ConnectionRefusedError(111, "the plugin's sandbox has ended")
        self.sock.settimeout(self.timeout_s)
        try:
            self.sock.send(b"d")
            _, fds, _, _ = socket.recv_fds(self.sock, 16, 1)
        except OSError as exc:
            self.sock.close()  # an answer that comes late would answer the next call
            raise ConnectionRefusedError(111, f"the plugin's sandbox did not connect ({exc})") from None
        if not fds:
            raise ConnectionRefusedError(111, "nothing accepts on the plugin's port")
        conn = socket.socket(fileno=fds[0])
        conn.setblocking(False)
        return conn

    def close(self) -> None:
        self.sock.close()


class SandboxedProcess:
    """The launcher's process, the proxy that carries the plugin's calls out, and the
    dialer the host reaches the plugin through."""

    def __init__(self, popen: subprocess.Popen[bytes], proxy: Any | None, dialer: Dialer | None = None) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.proxy = proxy
        self.connect = dialer

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
        if self.connect is not None:
            self.connect.close()


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
        from workbench.plugins import gate

        decided = gate.apply(spec.gate)
        grants = [f"read:{spec.cwd}", f"read:{spec.env['WORKBENCH_PLUGIN_SECRET_FILE'].rsplit('/', 1)[0]}",
                  f"read:{sdk_folder()}", f"read:{spec.data}"]
        if decided.project_readable:
            grants.append(f"read:{spec.project}")
        if decided.data_writable:
            grants.append(f"write:{spec.data}")
        if spec.api_port is not None:
            grants.append(f"net:127.0.0.1:{spec.api_port}")
        if spec.audit is not None:
            gate.audit(spec.audit, spec.env["WORKBENCH_PLUGIN_ID"], grants, decided, memory_mb=spec.memory_mb)
        env = dict(spec.env)
        env.pop("LISTEN_FDS", None)
        env.pop("WORKBENCH_PLUGIN_LISTEN_FD", None)
        port = int(env["WORKBENCH_PLUGIN_PORT"])
        server = ServerConfig(name=env["WORKBENCH_PLUGIN_ID"], command=argv[0], args=tuple(argv[1:]),
                              env=env, cwd=str(spec.cwd), sandbox=True, grants=tuple(grants))
        limits = self.limits if spec.memory_mb is None else dataclasses.replace(self.limits,
                                                                                  memory_mb=spec.memory_mb)
        launch = prepare(server, cwd=spec.cwd, env={"PATH": SYSTEM_PATH}, limits=limits,
                         pins_file=self.pins / f"{server.name}.json", serve_port=port)
        spec.log.parent.mkdir(parents=True, exist_ok=True)
        with open(spec.log, "ab") as log:
            popen = subprocess.Popen(launch.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                     env={"PATH": SYSTEM_PATH, "LANG": "C.UTF-8"}, cwd="/",
                                     pass_fds=launch.pass_fds, start_new_session=True)
        launch.started()
        assert launch.control is not None  # a serve port always makes one
        control = launch.control
        control.settimeout(self.startup_timeout_s)
        received: dict[bytes, int] = {}
        try:
            for _ in range(2 if launch.policy.net else 1):
                what, fds, _, _ = await asyncio.to_thread(socket.recv_fds, control, 16, 1)
                if not fds:
                    break
                received[what] = fds[0]
        except OSError:
            pass
        finally:
            control.close()
        if b"dialer" not in received or (launch.policy.net and b"proxy" not in received):
            for fd in received.values():
                os.close(fd)
            popen.kill()
            popen.wait()
            raise RuntimeError(f"the sandbox did not set up the plugin's network (see {spec.log})")
        proxy = None
        if b"proxy" in received:
            from workbench.sandbox.proxy import Proxy

            proxy = await Proxy.serve(socket.socket(fileno=received[b"proxy"]), launch.policy.net, per_call=False)
        return SandboxedProcess(popen, proxy, Dialer(socket.socket(fileno=received[b"dialer"])))
