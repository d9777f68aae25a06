"""The environment a plugin is started with, under the seed's names or Workbench's."""

from __future__ import annotations

import json
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MANIFEST_PATH = "plugin.json"


def _pick(env: Mapping[str, str], name: str) -> str:
    return env.get(f"WORKBENCH_{name}") or env.get(f"LOOP_{name}") or ""


@dataclass
class Env:
    """What the host told the plugin: where to serve, its secret, the Plugin API."""

    port: int
    secret_file: str
    api_url: str
    token_file: str
    listen_fd: int | None
    data: str

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None) -> Env:
        env = os.environ if env is None else env
        port = _pick(env, "PLUGIN_PORT")
        fd = env.get("WORKBENCH_PLUGIN_LISTEN_FD")
        return cls(port=int(port) if port.isdigit() else 0, secret_file=_pick(env, "PLUGIN_SECRET_FILE"),
                   api_url=_pick(env, "API_URL"), token_file=_pick(env, "PLUGIN_TOKEN_FILE"),
                   listen_fd=int(fd) if fd and fd.isdigit() else None,
                   data=env.get("WORKBENCH_PLUGIN_DATA", "/data"))

    def secret(self) -> str:
        """The secret every request to the plugin carries."""
        return Path(self.secret_file).read_text(encoding="utf-8").strip()

    def token(self) -> str:
        """The project-scoped token the plugin's calls to the Plugin API carry."""
        return Path(self.token_file).read_text(encoding="utf-8").strip()

    def listener(self) -> socket.socket:
        """The socket to serve on: the one handed over, else a new one on the port."""
        if self.listen_fd is not None:
            return socket.socket(fileno=self.listen_fd)
        sock = socket.create_server(("127.0.0.1", self.port))
        return sock

    def client(self) -> Any:
        from workbench_plugin_sdk.client import Client

        return Client(self.api_url, self.token())


def _strip_jsonc(text: str) -> str:
    """Comments and trailing commas out, strings kept (enough for a manifest the
    workbench already checked)."""
    out, i, in_string = [], 0, False
    while i < len(text):
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\":
                out.append(text[i + 1:i + 2])
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        elif text.startswith("/*", i):
            i = text.find("*/", i + 2) + 2
            continue
        else:
            out.append(c)
        i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def read_manifest(path: str = MANIFEST_PATH) -> dict[str, Any]:
    """``plugin.json`` as a dict (JSON with comments and trailing commas)."""
    return json.loads(_strip_jsonc(Path(path).read_text(encoding="utf-8")))
