"""The tool registry: where tools come from, which one a name means, and how a tool runs.

Imports the manifest package and leaves; never the core, the agent or a front-end.
"""
