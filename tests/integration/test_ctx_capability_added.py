"""A ctx capability is added with its spec and its handler alone.

The test declares ``ctx.weather.forecast(city, days?)`` in a registration of its own
(``ctx_spec.register``) and answers it with a handler of its own (``@handles``):
nothing else is written for it. A Python tool and a Deno tool, each in a real
sandboxed worker, call it once the person grants it; a denied one and an undeclared
one are refused; the permission prompt, the consent and its diff name it with the
spec's words; and ``MockContext`` offers it for authors' tests.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from pydantic import ValidationError

from workbench import ctx_spec
from workbench.core import ctx_handler
from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.events import PermissionAnswer, PermissionRequest
from workbench.ext.consent import consent_of, diff_consent, permission_items
from workbench.manifest.models import Manifest
from workbench.testing import MockContext, run_tool
from workbench.tools.loader import load_extension
from workbench.tui.screens.permission import describe

LABEL = "Read the weather forecast"

WEATHER = ctx_spec.Capability(
    "weather", (ctx_spec.Member("forecast", ("city", "days"), defaults={"days": 1}),),
    "permission", ctx_spec.PermissionKind("weather", "capability", LABEL,
                                          description="The forecast where the person is."))

PY = '''
def forecast(args, ctx):
    return ctx.weather.forecast(args["city"])

async def week(args, ctx):
    return await ctx.weather.forecast(args["city"], days=7)

def undeclared(args, ctx):
    try:
        return ctx.weather.forecast("Oslo")
    except PermissionError as refused:
        return {"refused": f"{type(refused).__name__}: {refused}"}
'''

TS = '''
export async function forecast(args: { city: string }, ctx: any) {
  return await ctx.weather.forecast(args.city);
}
export async function week(args: { city: string }, ctx: any) {
  return await ctx.weather.forecast(args.city, 7);
}
export async function undeclared(_args: unknown, ctx: any) {
  try {
    return await ctx.weather.forecast("Oslo");
  } catch (error) {
    return { refused: `${(error as Error).name}: ${(error as Error).message}` };
  }
}
'''

DECLARED = {"weather": {"reason": "Say whether to take an umbrella."}}


@pytest.fixture
def weather():
    """The capability and its handler, for this test only."""
    ctx_spec.register(WEATHER)

    @ctx_handler.handles("weather")
    async def answer(call: ctx_handler.CallHandler, member: str, params: dict) -> dict:
        return {"city": params["city"], "days": params["days"], "sky": "clear",
                "asked_by": call.tool.qualified_name}

    try:
        yield
    finally:
        ctx_handler.HANDLERS.pop("weather", None)
        ctx_spec.unregister("weather")


class Person:
    """Answers each permission prompt with ``decision`` and keeps what was asked."""

    def __init__(self, decision: str) -> None:
        self.decision = decision
        self.asked: list[PermissionRequest] = []

    async def answer(self, request):
        assert isinstance(request, PermissionRequest), request
        self.asked.append(request)
        return PermissionAnswer(self.decision)


def manifest(runtime: str) -> dict:
    entry = "main.py" if runtime == "python" else "index.ts"
    tool = {"parameters": {"type": "object"}}
    return {"name": f"sky-{runtime}", "displayName": "Sky", "description": "The weather.",
            "entry": entry, "tools": [
                {**tool, "name": "forecast", "description": "Forecast.", "function": "forecast",
                 "permissions": DECLARED},
                {**tool, "name": "week", "description": "A week.", "function": "week",
                 "permissions": DECLARED},
                {**tool, "name": "undeclared", "description": "Asks without declaring.",
                 "function": "undeclared"}]}


def install(host: Host, root: Path, runtime: str) -> None:
    folder = root / "extensions" / f"sky-{runtime}"
    folder.mkdir(parents=True)
    code = PY if runtime == "python" else TS
    (folder / ("main.py" if runtime == "python" else "index.ts")).write_text(textwrap.dedent(code))
    (folder / "loca.json").write_text(json.dumps(manifest(runtime)))
    assert load_extension(host.registry, folder), host.registry.load_errors


@pytest.mark.parametrize("runtime", ["python", "deno"])
async def test_a_capability_added_by_spec_and_handler_reaches_sandboxed_tools(
        weather, runtime, tmp_path):
    async with Host.open(cwd=tmp_path) as host:
        install(host, tmp_path, runtime)
        person = Person("once")
        host.answer_with(person)

        outcome = await host.tools.call("forecast", {"city": "Lisbon"})
        assert outcome.ok, outcome.error
        assert outcome.result == {"city": "Lisbon", "days": 1, "sky": "clear",
                                  "asked_by": f"sky-{runtime}.forecast"}
        # Asked at first use, with the spec's words on the prompt.
        [request] = person.asked
        [entry] = request.permissions
        assert (entry["kind"], entry["reason"]) == ("weather", DECLARED["weather"]["reason"])
        assert describe(entry) == (LABEL, "", "")

        week = await host.tools.call("week", {"city": "Porto"})
        assert week.ok and week.result["days"] == 7, week.error

        person.decision = "deny"
        denied = await host.tools.call("forecast", {"city": "Lisbon"})
        assert not denied.ok and denied.error["kind"] == "permission", denied.to_json()

        undeclared = await host.tools.call("undeclared", {})
        assert undeclared.ok, undeclared.error
        refusal = undeclared.result["refused"]
        assert refusal.startswith("PermissionDenied: ") and "did not declare the weather" in refusal


async def test_without_its_handler_the_member_is_refused_not_served(weather, tmp_path):
    async with Host.open(cwd=tmp_path) as host:
        install(host, tmp_path, "python")
        host.answer_with(Person("once"))
        ctx_handler.HANDLERS.pop("weather")
        outcome = await host.tools.call("forecast", {"city": "Lisbon"},
                                       CallOptions(prompt=False))
    assert not outcome.ok
    assert outcome.error["kind"] == "invalid_arguments"
    assert "ctx has no member 'weather.forecast'" in outcome.error["message"]


def test_the_consent_and_its_diff_name_the_new_kind(weather, tmp_path):
    before = {"name": "sky-python", "displayName": "Sky", "description": "The weather.",
              "tools": [{"name": "forecast", "description": "Forecast.", "function": "forecast",
                         "parameters": {"type": "object"}}]}
    after = manifest("python")
    old = consent_of(Manifest.model_validate(before), version="1")
    new = consent_of(Manifest.model_validate(after), version="2")
    assert new["tools"]["forecast"] == {"weather": [{"reason": DECLARED["weather"]["reason"],
                                                     "optional": False}]}
    [item] = permission_items(new["tools"]["forecast"])
    assert (item.kind, item.value, item.describe()) == ("weather", "", "weather")
    changes = diff_consent(old, new)
    assert "permission added: forecast: weather — Say whether to take an umbrella." in changes.describe()
    assert changes.widens


def test_mock_context_offers_the_new_member(weather):
    def forecast(args, ctx):
        return ctx.weather.forecast(args["city"])

    ctx = MockContext(weather={"forecast": lambda city: {"city": city, "sky": "rain"}})
    assert run_tool(forecast, {"city": "Bergen"}, ctx) == {"city": "Bergen", "sky": "rain"}
    with pytest.raises(TypeError, match="ctx.weather has no member rain"):
        MockContext(weather={"rain": lambda: None})


def test_taken_back_it_is_gone_from_the_manifest_and_the_mock(weather):
    ctx_spec.unregister("weather")
    with pytest.raises(TypeError, match="ctx has no member weather"):
        MockContext(weather={})
    parsed = Manifest.model_validate(manifest("python"))
    assert "weather" not in parsed.tools[0].permissions.model_dump()


def test_the_manifest_checks_the_new_kind_entries_where_they_are(weather):
    bad = manifest("python")
    bad["tools"][0]["permissions"] = {"weather": [{"reason": "ok"}, {"optional": True}]}
    with pytest.raises(ValidationError) as refused:
        Manifest.model_validate(bad)
    [error] = refused.value.errors()
    assert error["loc"] == ("tools", 0, "permissions", "weather", 1, "reason")
    assert error["type"] == "missing"
