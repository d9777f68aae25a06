"""The grants people gave tools, providers and hooks: read, explained and revoked.

``Grants`` is a service the ``Host`` builds and reaches as ``host.grants``. A grant
holder is named the way people name it: a tool (``EXTENSION.TOOL`` or a plain name),
an extension's provider (``TYPE:EXTENSION/NAME``, as its grants are kept) or the
``hooks.rewrite`` grant of an extension's ``on_tool_call`` hook (``hook:NAME``).

It must not import a front-end; the store, the broker, the registries, the gateway
and the sandbox runner are handed in.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from workbench.core.provider_registry import PROVIDER_TYPES, ProviderRegistry
from workbench.core.services import NET_REFUSED
from workbench.errors import ExitCode, ToolError, WorkbenchError
from workbench.permissions.requirements import Requirement, expand_path

if TYPE_CHECKING:
    from workbench.core.loading import Loading
    from workbench.core.gateway import ToolGateway
    from workbench.core.runner import SandboxRunner
    from workbench.hooks.registry import HookRegistry
    from workbench.permissions.broker import Broker
    from workbench.store import Store
    from workbench.tools.registry import ToolRegistry

NET_REFUSALS_SHOWN = 10
"""How many of a holder's latest network refusals ``explain`` lists."""


class Grants:
    """Reads, explains and revokes grants; see the module docstring.

    Args:
        store: Where grants and the audit log are kept.
        broker: The grants in force (a session's too), forgotten on revoke.
        registry: The tools loaded.
        providers: The providers the loaded extensions register.
        hooks: The hooks loaded.
        gateway: What a tool declares (``requirements``) and where templates point.
        sandbox: Its warm workers are dropped when their grants change.
        loading: Loads the extensions first when they are not yet.
    """

    def __init__(self, *, store: Store, broker: Broker, registry: ToolRegistry,
                 providers: ProviderRegistry, hooks: HookRegistry, gateway: ToolGateway,
                 sandbox: SandboxRunner, loading: Loading) -> None:
        self.store = store
        self.broker = broker
        self.registry = registry
        self.providers = providers
        self.hooks = hooks
        self.gateway = gateway
        self.sandbox = sandbox
        self.loading = loading

    def from_flags(self, name: str, flags: list[str],
                   grant_all: bool = False) -> tuple[tuple[str, str], ...]:
        """Turn ``--grant KIND[:VALUE]`` flags into per-call grants for tool ``name``.

        A value may use the manifest's templates (``$home/notes``); ``KIND`` alone
        grants every entry of that kind the tool declares.

        Raises:
            WorkbenchError: (usage) a flag names a kind the tool does not declare.
        """
        self.loading.ensure()
        tool = self.registry.resolve(name)
        try:
            declared = self.gateway.requirements(tool)
        except ValueError:
            # A template names nothing here ($project in a folder that is not a
            # project's): nothing can be granted; the call is refused, saying why.
            return ()
        if grant_all:
            return tuple((r.kind, r.value) for r in declared)
        pairs: list[tuple[str, str]] = []
        for flag in flags:
            kind, sep, value = flag.partition(":")
            matching = [r for r in declared if r.kind == kind]
            if not matching:
                kinds = ", ".join(sorted({r.kind for r in declared})) or "none"
                raise WorkbenchError(f"--grant {flag}: {tool.qualified_name} declares no {kind!r} "
                                     f"permission (it declares: {kinds})", exit_code=ExitCode.USAGE)
            if not sep:
                pairs.extend((r.kind, r.value) for r in matching)
                continue
            if kind in ("read", "write"):
                value = expand_path(value, roots=self.gateway.roots, extension_dir=tool.folder,
                                    extension=tool.extension)
                value = os.path.normpath(os.path.join(self.gateway.cwd, value))
                # A folder named through a link is the declared one it resolves to.
                value = next((r.value for r in matching
                              if os.path.realpath(value) == os.path.realpath(r.value)), value)
            pairs.append((kind, value))
        return tuple(pairs)

    def standing(self, tool: str | None = None) -> list[dict[str, Any]]:
        """Every standing grant and denial (``workbench grants list``), or only those of
        ``tool`` (``EXTENSION.TOOL``, as the registry resolves it): ``Store.list_grants``'s rows.

        Raises:
            ToolError: No such tool.
        """
        return self.store.list_grants(self.registry.resolve(tool).grant_key if tool else None)

    def explain(self, name: str) -> list[dict[str, Any]]:
        """For each permission ``name`` (a tool, a provider as ``TYPE:EXTENSION/NAME``, a
        hook as ``hook:NAME``) declares: its state (``Broker.explain``), by which grant,
        when; then the latest requests the network proxy refused it (state ``refused``:
        ``value`` the target ``host:port``, ``reason`` the rule that refused it, ``at``
        when), among the audit log's recent entries (``Store.recent_audit``).

        Raises:
            ToolError: No such tool, provider or hook.
        """
        key, requirements = self._holder(name)
        rows = [{**row, "tool": key} for row in self.broker.explain(key, requirements)]
        refusals = self.store.recent_audit(NET_REFUSED, self._runs_as(key), NET_REFUSALS_SHOWN)
        for entry in reversed(refusals):
            detail = entry["detail"] if isinstance(entry["detail"], dict) else {}
            rows.append({"kind": "net", "value": str(detail.get("target", "")),
                         "reason": str(detail.get("reason", "")), "optional": False,
                         "key": f"net:{detail.get('target', '')}", "state": "refused",
                         "grant": None, "at": entry["at"], "status": detail.get("status"),
                         "session_id": detail.get("session_id"), "tool": key})
        return rows

    def revoke(self, name: str, kind: str | None = None, value: str | None = None) -> int:
        """Remove the grants of a tool, a provider (``TYPE:EXTENSION/NAME``) or a hook
        (``hook:NAME``): all, of one kind, or one value; returns how many.

        Raises:
            ToolError: No such tool, provider or hook.
        """
        key, _ = self._holder(name)
        removed = self.store.revoke_grants(key, kind, value)
        self.broker.forget(key, kind, value)
        self.sandbox.forget(key)
        self.store.audit("person", "grant.revoke", key,
                         {"kind": kind, "value": value, "removed": removed})
        return removed

    def _holder(self, name: str) -> tuple[str, list[Requirement]]:
        """What holds grants under ``name``: its key and requirements.

        Raises:
            ToolError: No such tool, provider or hook.
        """
        self.loading.ensure()
        if name.startswith("hook:"):
            return self._hook_holder(name.removeprefix("hook:"))
        kind, colon, rest = name.partition(":")
        extension, slash, provider_name = rest.partition("/")
        if colon and slash and kind in PROVIDER_TYPES:
            provider = self.providers.get(kind, extension, provider_name)
            if provider is None:
                raise ToolError("unknown_tool", f"no {kind} provider {provider_name!r} in "
                                f"extension {extension!r}; `workbench ext status` lists them")
            return provider.key, provider.requirements(self.gateway.roots)
        tool = self.registry.resolve(name)
        return tool.grant_key, self.gateway.requirements(tool)

    def _hook_holder(self, extension: str) -> tuple[str, list[Requirement]]:
        """The ``hooks.rewrite`` grant of an extension with an ``on_tool_call`` hook,
        named by its name or its identity (``hook:NAME``)."""
        from workbench.core.gateway import REWRITE_GRANT
        from workbench.hooks.registry import rewrite_key

        found = [hook for hook in self.hooks.for_event("on_tool_call")
                 if extension in (hook.extension, hook.identity)]
        if not found:
            raise ToolError("unknown_tool", f"no loaded extension {extension!r} has an "
                            "on_tool_call hook; `workbench ext status` lists the hooks")
        return rewrite_key(found[0].identity), [REWRITE_GRANT]

    def _runs_as(self, key: str) -> str:
        """The tool name a grant holder's calls run under in the sandbox: a provider
        (``TYPE:EXTENSION/NAME``) runs as a tool of its extension."""
        kind, colon, rest = key.partition(":")
        extension, _, provider_name = rest.partition("/")
        provider = self.providers.get(kind, extension, provider_name) if colon else None
        return provider.as_tool().qualified_name if provider is not None else key
