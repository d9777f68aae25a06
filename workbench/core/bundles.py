"""The bundles' service as a face reaches it: ``bundles(host)`` gives the one
``BundleService`` the agent's ``extension_manage``/``extension_call`` call too
(``workbench/bundles/service.py``), so ``workbench bundle …`` and the tools share every
check. Part of the core's public API (``core/__init__.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.bundles.service import BundleService
    from workbench.core.host import Host


def bundles(host: Host) -> BundleService:
    """The host's bundles service (its source ``bundles``).

    Raises:
        WorkbenchError: The host has no bundles source.
    """
    from workbench.bundles.source import BundleSource

    found = host.sources.get("bundles")
    if not isinstance(found, BundleSource):
        raise WorkbenchError("this workbench has no extension bundles")
    return found.service


def check(bundle: Any) -> dict[str, Any]:
    """``bundle`` checked and its digest computed, with no host opened (``bundle validate``)."""
    from workbench.bundles.service import BundleService

    return BundleService.validate(bundle)


def set_runtime(host: Host, prefer: str) -> None:
    """Run bundles under ``node``, ``deno`` or ``auto`` (Node where installed)."""
    if prefer not in ("auto", "node", "deno"):
        raise WorkbenchError(f"the runtime must be auto, node or deno, not {prefer!r}")
    bundles(host).runner.prefer = prefer
