"""Content-addressed extension bundles: immutable revisions named by an id and the
sha256 digest of their manifest and files, kept under ``<project>/.workbench/bundles/``,
managed and called by the agent itself (``extension_manage``, ``extension_call``) and
by people (``workbench bundle …``) through one service (``service.py``).

- ``manifest.py``: the manifest and the file names, checked with errors naming the field;
- ``digest.py``: the canonical encoding the digest is taken over (docs/bundles.md);
- ``store.py``: the revisions on disk, written and read beneath the project with no link
  followed, each one checked against its digest at every use;
- ``runtime.py`` and ``runner.mjs``: a tool or MCP entrypoint staged from the pinned
  snapshot and run under Node (or Deno's Node compatibility) in a shell worker of the
  sandbox, bounded in input, output, protocol data and time;
- ``service.py``: list, validate, create, inspect, call;
- ``source.py``: the two tools as a ``ToolSource``.

Imports the shell's worker (``workbench.shell.runner``), the sandbox, the permissions'
project check, the tool contract and the leaves; never the store, the core or a face.
Nothing here runs a bundle while listing or validating it, and no bundle changes a
chat's tools or system prompt.
"""
