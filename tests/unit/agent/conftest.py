"""Fixtures for the provider tests: a scripted HTTP server on 127.0.0.1 (``http_fake``)."""

from __future__ import annotations

import pytest
from http_fake import FakeServer


@pytest.fixture
async def fake_server():
    server = await FakeServer().start()
    try:
        yield server
    finally:
        await server.close()


@pytest.fixture
def unused_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
