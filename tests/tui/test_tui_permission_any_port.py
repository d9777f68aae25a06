"""The permission prompt spells out a "*" host or port."""

from __future__ import annotations

import pytest

from workbench.tui.screens.permission import describe


@pytest.mark.parametrize(("value", "where", "warning"), [
    ("api.example.com:*", "api.example.com, any port", "any port of the host"),
    ("*:*", "any host, any port", "any host on the internet"),
    ("*:443", "any host, port 443", "any host on the internet"),
    ("api.example.com:443", "api.example.com port 443", "")])
def test_net_entries(value: str, where: str, warning: str) -> None:
    verb, shown, warned = describe({"kind": "net", "value": value})
    assert (shown, warned) == (where, warning) and verb
