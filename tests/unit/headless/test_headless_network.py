"""The headless answers to a shell command's network card: refused under ``deny``, once
for an allowlisted ``shell``, the delegate's decision otherwise."""

from __future__ import annotations

import json
import sys

import pytest

from workbench.events import NetworkRequest, RequestDenied
from workbench.headless.responder import HeadlessResponder

REQUEST = NetworkRequest(tool="shell", host="pypi.org", port=443, session_id="s1", command="pip install x")


async def test_deny_refuses_naming_the_host() -> None:
    with pytest.raises(RequestDenied, match="pypi.org:443"):
        await HeadlessResponder("deny").answer(REQUEST)


async def test_allowlisted_shell_is_allowed_once_and_others_refused() -> None:
    assert await HeadlessResponder("allowlisted", allowlist=["shell"]).answer(REQUEST) == "once"
    with pytest.raises(RequestDenied, match="allowlist"):
        await HeadlessResponder("allowlisted", allowlist=["other"]).answer(REQUEST)


@pytest.mark.parametrize(("decision", "expected"), [("chat", "chat"), ("once", "once"), ("deny", None),
                                                     ("always", None)])
async def test_the_delegate_decides(tmp_path, decision, expected) -> None:
    script = tmp_path / "delegate.py"
    script.write_text("import json, sys\nrequest = json.load(sys.stdin)\n"
                      "assert request['type'] == 'network' and request['host'] == 'pypi.org'\n"
                      f"print(json.dumps({{'decision': {json.dumps(decision)}}}))\n")
    responder = HeadlessResponder(f"delegate:{sys.executable} {script}")
    if expected is None:
        with pytest.raises(RequestDenied):
            await responder.answer(REQUEST)
    else:
        assert await responder.answer(REQUEST) == expected
