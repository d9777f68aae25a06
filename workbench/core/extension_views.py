"""The shapes ``host.extensions`` hands a front-end, and what one shows of them.

``host.extensions`` returns installed extensions (``InstalledExtension``), the shipped
add-ons (``AddonRow``), install,
update and trust plans (``InstallPlan``) and registry search results
(``SearchResult``), and refuses a change a person declined (``InstallDeclined``);
a front-end that names those types, or shows what a tool of an
extension may do (``tool_permissions``: ``PermissionItem`` rows, the words the consent
uses), imports them from here rather than from the ext package. Kept apart from
``extension_service`` so that opening a host does not import what only drawing them
needs. It must not import a front-end.
"""

from __future__ import annotations

from workbench.ext.addons import AddonRow
from workbench.ext.consent import PermissionItem, consent_of, permission_items
from workbench.ext.errors import InstallDeclined
from workbench.ext.installed import InstalledExtension
from workbench.ext.plan import InstallPlan
from workbench.ext.registry import SearchResult

__all__ = ["AddonRow", "InstallDeclined", "InstallPlan", "InstalledExtension", "PermissionItem", "SearchResult",
           "tool_permissions"]


def tool_permissions(extension: InstalledExtension) -> dict[str, tuple[PermissionItem, ...]]:
    """What each tool of ``extension`` may do, as its consent words it, by tool name
    (in the manifest's order; empty without a readable manifest)."""
    manifest = extension.manifest
    if manifest is None:
        return {}
    consent = consent_of(manifest, version=extension.version)
    return {tool.name: permission_items(consent["tools"].get(tool.name, {}))
            for tool in manifest.tools}
