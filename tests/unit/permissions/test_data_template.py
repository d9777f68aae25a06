"""``$data``: each extension's own data folder, which never names another's; and the
consumer a call serves, as the host tells a tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.core.calls import CallOptions
from workbench.permissions.requirements import TemplateRoots, expand_path, requirements_of


def roots(tmp_path: Path) -> TemplateRoots:
    return TemplateRoots.for_host(tmp_path / "home")


def test_data_is_each_extensions_own_folder(tmp_path):
    here = roots(tmp_path)
    mine = expand_path("$data/dbs", roots=here, extension_dir=tmp_path, extension="mine")
    theirs = expand_path("$data", roots=here, extension_dir=tmp_path, extension="theirs")
    assert mine == str(tmp_path / "home" / "data" / "mine" / "dbs")
    assert theirs == str(tmp_path / "home" / "data" / "theirs") and (tmp_path / "home/data/theirs").is_dir()
    for path in ("$data/../theirs", "$data/x/../../theirs/db", "$data/.."):
        with pytest.raises(ValueError, match="leaves"):
            expand_path(path, roots=here, extension_dir=tmp_path, extension="mine")
    for name in (None, "../theirs", "", "a/b", ".."):
        with pytest.raises(ValueError):
            expand_path("$data", roots=here, extension_dir=tmp_path, extension=name)
    # Only the extension's own $data is granted without a question; another's path is not.
    reqs = requirements_of({"write": [{"path": "$data", "reason": "own"},
                                      {"path": str(tmp_path / "home/data/theirs"), "reason": "theirs"}]},
                           roots=here, extension_dir=tmp_path, extension="mine")
    assert [(r.value.endswith("/mine"), r.own_data) for r in reqs] == [(True, True), (False, False)]


def test_data_folder_through_a_link_is_refused(tmp_path):
    here = roots(tmp_path)
    (tmp_path / "home" / "data").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "home" / "data" / "mine").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ValueError, match="symbolic link"):
        expand_path("$data", roots=here, extension_dir=tmp_path, extension="mine")


@pytest.mark.parametrize("caller, responder, consumer", [
    ("person", None, "person"), ("agent", None, "mcp"), ("schedule", None, "schedule"),
    ("model", "interactive", "chat"), ("model", "headless", "headless"), ("model", "schedule", "schedule"),
    ("model", None, "headless")])
def test_the_consumer_a_call_serves(caller, responder, consumer):
    from workbench.core.gateway import ToolGateway

    class Responder:
        interactive = responder == "interactive"

    front = Responder()
    if responder in ("headless", "schedule"):
        front.consumer = responder  # type: ignore[attr-defined]
    gateway = ToolGateway.__new__(ToolGateway)
    gateway.responder = front
    assert gateway.consumer(CallOptions(caller=caller)) == consumer
