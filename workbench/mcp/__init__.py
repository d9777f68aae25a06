"""MCP servers as a source of tools, and the workbench as an MCP server for other agents.

Owns the server entries of the config (``[mcp.servers.NAME]``), starting and
supervising servers (stdio, optionally sandboxed, and streamable HTTP), turning
their tools into registry tools named ``mcp__server__tool``, elicitation forms, and
``workbench mcp serve``. Imports the tool registry, config, sandbox and the leaves;
must not import the core or a front-end (the host is injected), and imports the ``mcp`` SDK only inside the functions that use it, so
that start-up never pays for it.
"""
