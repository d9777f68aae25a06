"""A zygote the entry point started ahead (``workbench call``) is the one the host's
sandbox takes; closing the host ends it."""

from __future__ import annotations

from pathlib import Path

from workbench.core.host import Host
from workbench.sandbox import client


def test_the_host_takes_the_zygote_started_ahead_and_closing_ends_it(tmp_path: Path) -> None:
    client.start_ahead()
    ahead = client._ahead
    assert ahead is not None
    with Host.open(cwd=tmp_path, defer_extensions=True) as host:
        assert host.sandbox.zygote is ahead
        assert host.sandbox.zygote.ping() == ahead.process.pid
        assert client._ahead is None
    assert ahead.closed and ahead.process.returncode is not None


def test_without_one_started_ahead_the_host_starts_its_own(tmp_path: Path) -> None:
    with Host.open(cwd=tmp_path, defer_extensions=True) as host:
        zygote = host.sandbox.zygote
        assert zygote.ping() == zygote.process.pid
    assert zygote.process.returncode is not None
