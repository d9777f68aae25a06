"""The Host: one object that owns config, store and registries, runs turns and tool
calls through one gateway, publishes events and raises requests. Never imports a front-end.

The core's public API, the one a face (``workbench.tui``, ``workbench.cli``) may import
(an import contract in ``pyproject.toml`` holds them to it; every other module here is
the core's own):

- ``host``: ``Host``, its services reached as ``host.chats``, ``host.tools``, …;
- the rows and shapes those services return: ``calls`` (``CallOptions``,
  ``ToolOutcome``), ``sessions`` (``SessionRow``), ``switches`` (``SwitchRow``,
  ``ToolRow``, ``SwitchMenu``), ``status`` (``StatusReport``), ``extension_views``,
  ``settings_service``, ``pages`` (``PageRow``, ``OpenedPage``, ``PageActionOutcome``,
  ``PageError``: what ``host.pages`` returns);
- the checks and helpers both faces share: ``answers``, ``schedule_forms``,
  ``mcp_prompting``, ``run_grants``, ``bundles`` (the bundles' service, ``workbench bundle``);
- what a command does with no host opened: ``config_files`` (``workbench config``,
  ``trust``), ``local_models`` (``workbench models``), ``checks`` (``doctor``, ``ext
  validate``), ``home_paths`` (the error guard), ``runs`` (``runs exec``: a scheduled
  run in a host of its own), ``plugin_service`` (``open_plugins`` for ``workbench
  plugin …``, and the rows it returns).
"""
