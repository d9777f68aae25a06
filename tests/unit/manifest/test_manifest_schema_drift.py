"""The checked-in loca.schema.json: generated from the models and in agreement with them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from workbench.manifest.models import Manifest
from workbench.manifest.schema import SCHEMA_PATH, generate_schema, main, render_schema

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "extensions"


def test_checked_in_schema_matches_the_models() -> None:
    checked_in = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert checked_in == generate_schema(), (
        "loca.schema.json is out of date: run `python -m workbench.manifest.schema`")
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render_schema()


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = generate_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == {"name", "displayName", "description"}
    assert set(schema["$defs"]["Provider"]["required"]) == {"type", "name", "function"}
    assert schema["$defs"]["ProviderConfig"]["additionalProperties"] is True
    tool = schema["$defs"]["Tool"]["properties"]
    assert {"alwaysAvailable", "timeoutMs", "parameters", "function"} <= set(tool)
    assert "title" not in tool["name"]
    assert "`tools.timeout_ms` setting" in tool["timeoutMs"]["description"]


def test_module_entry_point_writes_the_schema(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    assert main([str(target)]) == 0
    assert target.read_text(encoding="utf-8") == render_schema()
    other = tmp_path / "again.json"
    done = subprocess.run([sys.executable, "-m", "workbench.manifest.schema", str(other)],
                          capture_output=True, text=True, check=True)
    assert str(other) in done.stdout
    assert other.read_text(encoding="utf-8") == render_schema()


def base(**fields) -> dict:
    data = {"name": "x", "displayName": "X", "description": "d"}
    data.update(fields)
    return data


def tool(**fields) -> dict:
    data = {"name": "t", "description": "d", "parameters": {"type": "object"}, "function": "f"}
    data.update(fields)
    return data


def provider(**fields) -> dict:
    data = {"type": "model", "name": "m", "function": "f"}
    data.update(fields)
    return data


SAMPLES = [
    base(),
    json.loads((FIXTURES / "wordcount-ts" / "loca.json").read_text()),
    json.loads((FIXTURES / "broken" / "loca.json").read_text()),
    base(extra=1),
    base(name=""),
    base(database=True, license="MIT", homepage="https://example.com", entry="src/main.py"),
    base(entry="main.rb"),
    base(entry="../main.py"),
    base(tools=[tool(name="a b")]),
    base(tools=[tool(name="x" * 65)]),
    base(tools=[tool(function="1x")]),
    base(tools=[tool(timeoutMs=0)]),
    base(tools=[tool(timeoutMs=10)]),
    base(tools=[tool(platforms=["linux_x11"])]),
    base(tools=[tool(platforms=["bsd"])]),
    base(tools=[tool(permissions={"memories": {"access": "read", "reason": "r"}})]),
    base(tools=[tool(permissions={"memories": [{"access": "read", "reason": "r"}]})]),
    base(tools=[tool(permissions={"llm": [{"reason": "a"}, {"reason": "b"}]})]),
    base(tools=[tool(permissions={"memories": [{"access": "read", "reason": "r"},
                                               {"access": "write", "reason": "w"}]})]),
    base(tools=[tool(permissions={"memories": [{"access": "read", "reason": "r"}, {"reason": "w"}]})]),
    base(tools=[tool(permissions={"net": [{"host": "h", "ports": "*", "reason": "r"}]})]),
    base(tools=[tool(permissions={"net": [{"host": "h", "ports": "443", "reason": "r"}]})]),
    base(tools=[tool(permissions={"env": [{"key": "API_KEY_2", "reason": "r"}]})]),
    base(tools=[tool(permissions={"env": [{"key": "2KEY", "reason": "r"}]})]),
    base(tools=[tool(permissions={"env": [{"key": "A-B", "reason": "r"}]})]),
    base(tools=[tool(permissions={"llm": {"reason": " "}})]),
    base(tools=[tool(permissions={"read": [{"path": "$env.HOME/x", "reason": "r"}]})]),
    base(tools=[tool(permissions={"read": [{"path": "rel", "reason": "r"}]})]),
    base(tools=[tool(permissions={"write": [{"path": "$home/../x", "reason": "r"}]})]),
    base(tools=[tool(permissions={"net": [{"host": "*", "ports": [65536], "reason": "r"}]})]),
    base(tools=[tool(permissions={"net": [{"host": "*", "ports": [], "reason": "r"}]})]),
    base(memories=[{"kind": "skill", "path": "skills/a"}]),
    base(memories=[{"kind": "skill", "path": "/skills/a"}]),
    base(memories=[{"kind": "knowledge", "path": "a/../b.md"}]),
    base(memories=[{"kind": "knowledge", "path": "C:\\b.md"}]),
    json.loads((FIXTURES / "house" / "loca.json").read_text()),
    base(providers=[provider()]),
    base(providers=[provider(type="storage")]),
    base(providers=[provider(name="Upper")]),
    base(providers=[provider(name="a/b")]),
    base(providers=[provider(function="1x")]),
    base(providers=[{"type": "model", "name": "m"}]),
    base(providers=[provider(config={"enabled": False, "label": "L", "own": {"x": 1}})]),
    base(providers=[provider(config={"enabled": "no"})]),
    base(providers=[provider(config={"timeout_ms": 0})]),
    base(providers=[provider(config={"priority": 1.5})]),
    base(providers=[provider(type="memory", config={"scopes": ["session", "all"]})]),
    base(providers=[provider(type="memory", config={"scopes": ["team"]})]),
    base(providers=[provider(permissions={"net": [{"host": "h", "ports": [443], "reason": "r"}]})]),
    base(providers=[provider(permissions={"read": [{"path": "rel", "reason": "r"}]})]),
    base(providers={"type": "model"}),
]


@pytest.mark.parametrize("sample", SAMPLES, ids=range(len(SAMPLES)))
def test_schema_and_models_agree(sample: dict) -> None:
    try:
        Manifest.model_validate(sample)
        models_accept = True
    except ValidationError:
        models_accept = False
    schema_accepts = Draft202012Validator(generate_schema()).is_valid(sample)
    assert schema_accepts == models_accept
