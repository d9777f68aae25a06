"""The worker shims and the host agree with ``workbench.ctx_spec``: each ctx member
that asks the host is the spec's, in a real Python worker and a real Deno worker, and
neither shim names one of its own; each capability has its handler on the host; every
permission kind's words come from the spec."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from workbench import ctx_spec
from workbench.core import ctx_handler
from workbench.core.host import Host
from workbench.ext import consent
from workbench.manifest.models import Permissions
from workbench.permissions import requirements
from workbench.testing import MockContext
from workbench.tools.loader import load_extension
from workbench.tui.screens.permission import describe

SHIMS = Path(ctx_spec.__file__).parent / "sandbox"

LOCAL_PY = {"signal", "display", "set_progress", "log", "get_chat_context"}
LOCAL_TS = {"signal", "display", "setProgress", "log", "getChatContext"}

PY = '''
def members(args, ctx):
    found = {}
    for name in dir(ctx):
        value = getattr(ctx, name)
        if name.startswith("_"):
            continue
        if callable(value):
            found[name] = None
        else:
            found[name] = sorted(n for n in dir(value) if not n.startswith("_"))
    return found
'''

TS = '''
export function members(_args: unknown, ctx: any) {
  const found: Record<string, string[] | null> = {};
  for (const [name, value] of Object.entries(ctx)) {
    found[name] = typeof value === "function" ? null : Object.keys(value as object).sort();
  }
  return found;
}
'''


def expected(runtime: str) -> dict:
    """What the spec says a tool's ctx holds, besides the shim's own local members."""
    found: dict = {}
    for capability in ctx_spec.capabilities():
        if capability.top_level:
            member = capability.members[0]
            found[member.name if runtime == "python" else member.ts] = None
        else:
            found[capability.name] = sorted(m.name if runtime == "python" else m.ts
                                            for m in capability.members)
    return found


@pytest.mark.parametrize("runtime", ["python", "deno"])
async def test_a_real_worker_has_exactly_the_spec_members(runtime, tmp_path):
    folder = tmp_path / "extensions" / f"lister-{runtime}"
    folder.mkdir(parents=True)
    entry = "main.py" if runtime == "python" else "index.ts"
    (folder / entry).write_text(textwrap.dedent(PY if runtime == "python" else TS))
    (folder / "loca.json").write_text(json.dumps({
        "name": f"lister-{runtime}", "displayName": "Lister", "description": "Lists ctx.",
        "entry": entry, "tools": [{"name": "members", "description": "List.", "function": "members",
                                   "parameters": {"type": "object"}}]}))
    async with Host.open(cwd=tmp_path) as host:
        assert load_extension(host.registry, folder), host.registry.load_errors
        outcome = await host.tools.call("members", {})
    assert outcome.ok, outcome.error
    local = LOCAL_PY if runtime == "python" else LOCAL_TS
    asking = {name: value for name, value in outcome.result.items() if name not in local}
    assert asking == expected(runtime)
    assert local <= set(outcome.result)


@pytest.mark.parametrize("shim", ["worker.py", "deno_worker.ts"])
def test_no_shim_names_a_member_of_its_own(shim):
    text = (SHIMS / shim).read_text()
    for entry in ctx_spec.wire():
        assert entry["method"] not in text, f"{shim} names {entry['method']}: it comes from the spec"
    named = set(re.findall(r"ctx/[A-Za-z.]+", text))
    assert named <= {"ctx/progress", "ctx/log", "ctx/display", "ctx/reply.open", "ctx/reply.piece"}, named


def test_every_capability_has_its_handler_and_only_those():
    assert set(ctx_handler.HANDLERS) == {c.name for c in ctx_spec.capabilities()}


def test_the_permission_kinds_everywhere_are_the_spec_kinds():
    kinds = ctx_spec.permission_kinds()
    assert kinds == ("net", "read", "write", "run", "env", "ffi", "sys",
                     "memories", "llm", "tts", "stt")
    assert tuple(Permissions.model_fields) == kinds
    assert requirements.OS_KINDS == ctx_spec.os_kinds()
    assert [item.kind for item in consent.permission_items(
        {kind: [{"reason": "r", "access": "read"}] for kind in reversed(kinds)})] == list(kinds)
    for spec in ctx_spec.all_permissions():
        value = "write" if spec.access else ""
        assert describe({"kind": spec.kind, "value": value})[0] == spec.label_for(value)
    assert describe({"kind": "memories", "value": "write"})[0] == "Read and change your memories"


def test_mock_context_groups_are_the_spec_groups():
    ctx = MockContext()
    for group, members in ctx_spec.groups().items():
        assert sorted(n for n in vars(getattr(ctx, group))) == sorted(members)
    for name in ctx_spec.top_level():
        assert callable(getattr(ctx, name))


@pytest.mark.parametrize("name", ["display", "signal", "log", "memories", "not a name"])
def test_a_capability_cannot_take_a_name_ctx_has(name):
    taken = ctx_spec.Capability(name, (ctx_spec.Member("go"),), "form")
    with pytest.raises(ValueError):
        ctx_spec.register(taken)
    assert ctx_spec.capabilities() == ctx_spec.BUILTIN
