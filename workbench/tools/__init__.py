"""The tool registry: where tools come from, which one a name means, and how a tool runs.

Imports the manifest, config (storage names) and sandbox (the worker's ``ctx`` for the
in-process runner) packages and the leaves; never the core, the agent, MCP or a front-end.
"""
