"""Plugins: long-running programs that serve HTTP for the workbench (``plugin.json``).

Owns the manifest (``manifest.py``, JSON with comments read by ``jsonc.py``), the
settings of a plugin layered from its manifest, the global and a trusted project's
config (``settings.py``), the installed plugins on disk (``installed.py``), one running
instance of a plugin (``runtime.py``: the process, its secret and token, the circuit
breaker of ``breaker.py``), the host's side of the Plugin API (``api.py``) and the tool
source that offers a plugin's tools (``source.py``).

May import config, sandbox and tools (the ``ToolSource`` contract) and the leaves;
never the core, the agent, MCP or the store (the core passes in what it needs).
"""
