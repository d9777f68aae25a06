"""The Python SDK for Workbench plugins: the server half of the contract and a client
for the Plugin API. Standard library only, so a plugin needs nothing installed.

A plugin written with it::

    from workbench_plugin_sdk import Env, Server, read_manifest, structured_result

    env = Env.load()
    manifest = read_manifest()
    server = Server(secret=env.secret(), version=manifest["version"],
                    tools={"score": lambda args, call: structured_result({"score": 3})})
    server.serve(env.listener())

It reads the seed's environment names (``LOOP_PLUGIN_PORT``, ``LOOP_PLUGIN_SECRET_FILE``,
``LOOP_API_URL``, ``LOOP_PLUGIN_TOKEN_FILE``) or Workbench's (``WORKBENCH_…``), and
serves on ``127.0.0.1:$LOOP_PLUGIN_PORT`` (or on a socket handed to it as
``WORKBENCH_PLUGIN_LISTEN_FD``, which an unsandboxed start may do).
"""

from __future__ import annotations

from workbench_plugin_sdk.client import Client, StatusError
from workbench_plugin_sdk.env import Env, read_manifest
from workbench_plugin_sdk.server import Call, Server, ToolFailed, structured_result, text_result

__all__ = ["Call", "Client", "Env", "Server", "StatusError", "ToolFailed", "read_manifest",
           "structured_result", "text_result"]
