"""The quick check of a tool's arguments says what the JSON Schema validator says, for
the schemas it takes on, and takes on no other."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest

from workbench.core.argument_check import quick_check
from workbench.core.host import Host
from workbench.tools.registry import HOST_RUNTIME, Tool

NESTED = {
    "type": "object",
    "properties": {
        "n": {"type": "integer", "description": "a count", "default": 1},
        "x": {"type": "number"},
        "b": {"type": "boolean"},
        "s": {"type": ["string", "null"], "title": "S"},
        "a": {"type": "array", "items": {"type": "string"}},
        "o": {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"],
              "additionalProperties": False},
        "any": True,
    },
    "required": ["n"],
    "additionalProperties": False,
}

SUPPORTED = [
    {"type": "object"},
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
     "properties": {"message": {"type": "string", "description": "Message to echo"}},
     "required": ["message"]},
    NESTED,
    {"$schema": "https://json-schema.org/draft/2020-12/schema", **NESTED},
    {"properties": {"n": {"type": "integer"}}, "required": ["n"]},
    {"type": "string", "format": "email"},
    {"type": "array", "items": {"type": ["integer", "boolean"]}},
    True,
]

INSTANCES = [
    {}, {"n": 1}, {"n": 1.0}, {"n": 1.5}, {"n": True}, {"n": "1"}, {"n": None},
    {"n": 1, "extra": 1}, {"n": 1, "x": True}, {"n": 1, "x": 2.5}, {"n": 1, "x": 7},
    {"n": 1, "b": 0}, {"n": 1, "b": False}, {"n": 1, "s": None}, {"n": 1, "s": 3},
    {"n": 1, "a": ["x"]}, {"n": 1, "a": ["x", 1]}, {"n": 1, "a": "x"},
    {"n": 1, "o": {"k": "v"}}, {"n": 1, "o": {}}, {"n": 1, "o": {"k": "v", "z": 1}},
    {"n": 1, "o": []}, {"n": 1, "any": [1, {"z": None}]}, {"message": "hello"},
    {"message": 5}, [], [1, True, 2.0], [1, "x"], [1.5], "text", "not an email", None, 3, 2.0,
]


def _validator(schema):
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema)


@pytest.mark.parametrize("schema", SUPPORTED, ids=range(len(SUPPORTED)))
def test_the_quick_check_agrees_with_the_validator(schema) -> None:
    check = quick_check(schema)
    assert check is not None
    validator = _validator(schema)
    disagree = [x for x in INSTANCES if check(x) != validator.is_valid(x)]
    assert disagree == []
    assert any(check(x) for x in INSTANCES)
    if schema is not True:
        assert not all(check(x) for x in INSTANCES)


@pytest.mark.parametrize("schema", [
    {"type": "string", "minLength": 1},
    {"$ref": "#/$defs/x", "$defs": {"x": {"type": "object"}}},
    {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    {"type": "object", "properties": {"mode": {"enum": ["a", "b"]}}},
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}},
    {"type": "object", "additionalProperties": {"type": "string"}},
    {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
    {"type": "array", "items": [{"type": "string"}]},
    {"type": "any"},
    {"type": []},
    {"type": "object", "required": "n"},
    {"type": "object", "properties": {"n": False}},
    {"type": "object", "properties": {"n": {"$schema": "x", "type": "string"}}},
    False,
    "object",
])
def test_a_schema_beyond_the_subset_gets_no_quick_check(schema) -> None:
    assert quick_check(schema) is None


@pytest.fixture
async def host(workdir):
    async with Host.open(cwd=workdir) as opened:
        yield opened


def _tool(name: str, parameters: dict) -> Tool:
    async def echo(arguments, ctx):
        return arguments

    return Tool(name=name, description=name, parameters=parameters, extension="tests",
                source="builtin", function=name, folder=Path(__file__).parent, entry=None,
                runtime=HOST_RUNTIME, handler=echo)


async def test_the_gateway_checks_older_drafts_by_their_own_rules(host) -> None:
    # Draft 4: 1.0 is no integer; a quick check (drafts 6 and later) would let it through.
    properties = {"type": "object", "properties": {"n": {"type": "integer"}}}
    host.registry.add(_tool("draft4", {"$schema": "http://json-schema.org/draft-04/schema#",
                                       **properties}))
    host.registry.add(_tool("draft7", {"$schema": "http://json-schema.org/draft-07/schema#",
                                       **properties}))
    refused = await host.tools.call("draft4", {"n": 1.0})
    assert refused.error == {"kind": "invalid_arguments", "message": "/n: 1.0 is not of type 'integer'",
                             "pointer": "/n"}
    assert (await host.tools.call("draft7", {"n": 1.0})).result == {"n": 1.0}
    wrong = await host.tools.call("draft7", {"n": "1"})
    assert wrong.error == {"kind": "invalid_arguments", "message": "/n: '1' is not of type 'integer'",
                           "pointer": "/n"}
