"""Providers in `loca.json`: the shape the models accept, and every bad entry refused
with the JSON pointer (and line) of what is wrong, without running the extension."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.errors import ManifestError
from workbench.manifest.validate import load_manifest, validate_extension

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "extensions"

ENTRY = "def answer(request, ctx):\n    return 'hi'\n\ndef other(request, ctx):\n    return 'ho'\n"


def extension(folder: Path, providers: list, *, entry: str | None = ENTRY) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {"name": "acme", "displayName": "Acme", "description": "Providers.",
                "providers": providers}
    if entry is not None:
        manifest["entry"] = "main.py"
        (folder / "main.py").write_text(entry)
    (folder / "loca.json").write_text(json.dumps(manifest, indent=2))
    return folder


def model(**fields) -> dict:
    return {"type": "model", "name": "house", "function": "answer", **fields}


def test_the_sample_extension_declares_one_provider_of_each_kind():
    manifest = load_manifest(FIXTURES / "house")
    assert [(p.type, p.name, p.function) for p in manifest.providers] == [
        ("model", "house", "house_model"), ("model", "probe", "probe_model"),
        ("memory", "team", "team_recall"), ("search", "web", "web_find")]
    house, probe, team, web = manifest.providers
    assert house.config.label == "The house model"
    assert house.config.model_dump(exclude_unset=True) == {"label": "The house model",
                                                           "greeting": "Hello from the house"}
    assert probe.permissions.read[0].path == "$home/secret.txt" and probe.permissions.read[0].optional
    assert team.config.scopes == ["all"] and web.config.priority == 5


def test_a_model_provider_with_its_permissions_and_config_is_valid(tmp_path):
    folder = extension(tmp_path / "acme", [model(
        config={"api_key_env": "ACME_KEY", "timeout_ms": 20000, "anything": [1, 2]},
        permissions={"net": [{"host": "api.acme.test", "ports": [443], "reason": "Ask the model."}],
                     "env": [{"key": "ACME_KEY", "reason": "The API key."}]})])
    report = validate_extension(folder)
    assert report.valid, report.to_json()
    assert report.warnings == []
    [provider] = report.manifest.providers
    assert provider.config.timeout_ms == 20000 and provider.config.model_extra == {"anything": [1, 2]}


@pytest.mark.parametrize(("providers", "pointer", "words"), [
    ([model(type="storage")], "/providers/0/type", "expected 'model', 'memory' or 'search'"),
    ([model(name="House")], "/providers/0/name", "is not a valid provider name"),
    ([model(name="acme/house")], "/providers/0/name", "is not a valid provider name"),
    ([model(name="")], "/providers/0/name", "is not a valid provider name"),
    ([{"type": "model", "name": "house"}], "/providers/0/function", "missing required field 'function'"),
    ([model(function="1x")], "/providers/0/function", "is not a valid export name"),
    ([model(config={"enabled": "no"})], "/providers/0/config/enabled", "expected true or false"),
    ([model(config={"timeout_ms": 0})], "/providers/0/config/timeout_ms", "must be greater than 0"),
    ([model(config={"priority": "5"})], "/providers/0/config/priority", "expected an integer"),
    ([{"type": "memory", "name": "m", "function": "answer", "config": {"scopes": ["team"]}}],
     "/providers/0/config/scopes/0", "expected 'session', 'agent', 'workspace' or 'all'"),
    ([{"type": "memory", "name": "m", "function": "answer", "config": {"scopes": "all"}}],
     "/providers/0/config/scopes", "expected an array"),
    ([{"type": "memory", "name": "m", "function": "answer", "config": {"scopes": []}}],
     "/providers/0/config/scopes", "must have at least 1 item"),
    ([model(config={"label": ""})], "/providers/0/config/label", "must not be empty"),
    ([model(permissions={"read": [{"path": "relative", "reason": "r"}]})],
     "/providers/0/permissions/read/0/path", "absolute"),
    ([model(function="missing")], "/providers/0/function", "has no export named 'missing'"),
    ([model(), model(function="other")], "/providers/1/name",
     "the model provider name 'house' is already used by /providers/0"),
    ("not a list", "/providers", "expected an array"),
])
def test_a_bad_provider_entry_is_refused_with_its_pointer(tmp_path, providers, pointer, words):
    report = validate_extension(extension(tmp_path / "acme", providers))
    assert not report.valid and report.manifest is None
    found = [p for p in report.errors if p.pointer == pointer]
    assert found, report.to_json()
    assert words in found[0].message
    assert found[0].line is not None


def test_one_name_may_serve_two_provider_types(tmp_path):
    providers = [model(), {"type": "memory", "name": "house", "function": "other"}]
    assert validate_extension(extension(tmp_path / "acme", providers)).valid


def test_providers_need_an_entry_module(tmp_path):
    report = validate_extension(extension(tmp_path / "acme", [model()], entry=None))
    assert [p.message for p in report.errors] == [
        "the extension has providers but no entry module: looked for index.ts, index.js, "
        "mod.ts, main.py"]


def test_a_key_meant_for_another_provider_type_or_unknown_is_a_warning(tmp_path):
    providers = [model(config={"priority": 3}, module="Acme.Model")]
    report = validate_extension(extension(tmp_path / "acme", providers))
    assert report.valid
    assert {p.pointer: p.message for p in report.warnings} == {
        "/providers/0/config/priority": "'priority' applies to search providers; this one is a "
                                        "model provider, so only its function reads it",
        "/providers/0/module": "unknown field 'module' is ignored"}


def test_load_manifest_names_the_first_bad_provider_by_pointer_and_line(tmp_path):
    folder = extension(tmp_path / "acme", [model(), model(name="Bad Name")])
    with pytest.raises(ManifestError) as caught:
        load_manifest(folder)
    assert caught.value.where.endswith("/providers/1/name")
    assert "loca.json:" in caught.value.where
