"""What a shell command may reach: the chat's network level within the person's ceiling.

Three levels, narrowest first (``config.settings.NETWORK_LEVELS``): ``off`` (no way
out at all: no proxy), ``registries`` (the package registries: PyPI, npm, Debian) and
``all`` (every public site). Only ports 80 and 443 are reached, always through the
host's proxy (``sandbox/proxy.py``), which never lets a name reach an internal address.
A host the chat's level does not allow but the ceiling does is asked about
(``NetworkRequest``): once, for the chat, or denied.
"""

from __future__ import annotations

from workbench.config.settings import NETWORK_LEVELS
from workbench.sandbox.policy import NetEndpoint

REGISTRY_HOSTS = ("pypi.org", "files.pythonhosted.org", "registry.npmjs.org", "registry.yarnpkg.com",
                  "deb.debian.org", "security.debian.org", "snapshot.debian.org")
"""The hosts of the package registries level."""

PORTS = (80, 443)


def narrower(a: str, b: str) -> str:
    """The narrower of two levels."""
    return a if NETWORK_LEVELS.index(a) <= NETWORK_LEVELS.index(b) else b


def allows(level: str, host: str, port: int) -> bool:
    """Whether ``level`` lets a command reach ``host:port``."""
    if port not in PORTS or level == "off":
        return False
    return level == "all" or host.lower().rstrip(".") in REGISTRY_HOSTS


def endpoints(level: str) -> list[NetEndpoint]:
    """The proxy's endpoints for ``level`` (hosts beyond it are decided one by one)."""
    if level == "all":
        return [NetEndpoint("*", list(PORTS))]
    if level == "registries":
        return [NetEndpoint(host, list(PORTS)) for host in REGISTRY_HOSTS]
    return []


def described(level: str) -> str:
    return {"off": "Off", "registries": "Package registries (PyPI, npm, Debian)",
            "all": "All public sites"}[level]
