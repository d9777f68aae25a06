"""Manifests and entry modules written the way Deno and Node authors write them: every
form the format allows is accepted, read into requirements, shown to the person, and
turned into the sandbox's flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.ext.consent import consent_of, diff_consent, permission_items
from workbench.ctx_spec import net_text
from workbench.manifest.models import Manifest
from workbench.manifest.paths import entry_candidates, find_entry
from workbench.manifest.validate import validate_extension
from workbench.permissions.policy import build_policy
from workbench.permissions.requirements import TemplateRoots, requirements_of
from workbench.sandbox.policy import Limits

# The samples extension's memory tool, as its author wrote it: one read entry and one
# write entry, each with its own reason.
SAMPLE_MEMORY = {
    "$schema": "https://get.loca.rzkyif.com/schemas/loca-v1.json",
    "name": "loca-extension-samples",
    "displayName": "Samples",
    "description": "One small tool per capability, to copy from.",
    "tools": [{
        "name": "sample_memory",
        "description": "List, read and save memories. Use when showing how ctx.memories works.",
        "parameters": {"type": "object", "properties": {"title": {"type": "string"}},
                       "required": ["title"]},
        "function": "sampleMemory",
        "permissions": {
            "memories": [
                {"access": "read", "reason": "Look up the memory you name."},
                {"access": "write", "reason": "Save the summary as a new memory.",
                 "optional": True},
            ],
            "llm": [{"reason": "Summarize the memory."}],
            "net": [{"host": "api.example.com", "ports": "*", "reason": "Reach the API."}],
            "env": [{"key": "EXAMPLE_API_KEY", "reason": "Authenticate to the API."}],
        },
    }],
}

ENTRY = "export async function sampleMemory(args: { title: string }) { return args.title; }\n"


def write(folder: Path, files: dict[str, str | dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content, indent=2))
    return folder


def test_the_samples_memory_tool_validates_with_its_two_memories_entries(tmp_path: Path) -> None:
    folder = write(tmp_path / "samples", {"loca.json": SAMPLE_MEMORY, "index.ts": ENTRY})
    report = validate_extension(folder)
    assert report.valid, [problem.describe() for problem in report.errors]
    permissions = report.manifest.tools[0].permissions
    assert [(entry.access, entry.optional) for entry in permissions.memories] == [
        ("read", False), ("write", True)]
    assert permissions.net[0].ports == "*"
    dumped = permissions.model_dump(by_alias=True, exclude_none=True)
    found = requirements_of(dumped, roots=TemplateRoots.for_host(tmp_path), extension_dir=folder)
    assert [(r.kind, r.value, r.optional) for r in found] == [
        ("net", "api.example.com:*", False), ("env", "EXAMPLE_API_KEY", False),
        ("memories", "read", False), ("memories", "write", True), ("llm", "", False)]


def test_the_review_names_each_entry_and_spells_out_any_port() -> None:
    manifest = Manifest.model_validate(SAMPLE_MEMORY)
    consent = consent_of(manifest, version="1.0.0")
    items = permission_items(consent["tools"]["sample_memory"])
    assert [(item.describe(), item.reason) for item in items] == [
        ("net api.example.com, any port", "Reach the API."),
        ("env EXAMPLE_API_KEY", "Authenticate to the API."),
        ("memories read", "Look up the memory you name."),
        ("memories write (optional)", "Save the summary as a new memory."),
        ("llm", "Summarize the memory."),
    ]


def test_an_unchanged_list_is_no_change_and_each_access_is_compared_with_its_own() -> None:
    manifest = Manifest.model_validate(SAMPLE_MEMORY)
    consent = consent_of(manifest, version="1")
    assert diff_consent(consent, consent).empty
    read_only = json.loads(json.dumps(SAMPLE_MEMORY))
    tool = read_only["tools"][0]
    tool["permissions"]["memories"] = tool["permissions"]["memories"][:1]
    tool["permissions"]["net"][0]["ports"] = [443]
    before = consent_of(Manifest.model_validate(read_only), version="0")
    diff = diff_consent(before, consent)
    assert diff.widens
    assert [change.describe() for change in diff.permissions] == [
        "widened: sample_memory: net api.example.com:443 -> api.example.com:*",
        "added: sample_memory: memories write"]
    assert not diff_consent(consent, before).widens


@pytest.mark.parametrize(("value", "shown"), [
    ("api.example.com:*", "api.example.com, any port"), ("*:*", "any host, any port"),
    ("*:443", "any host, port 443"), ("api.example.com:443,80", "api.example.com:443,80")])
def test_net_values_as_a_person_reads_them(value: str, shown: str) -> None:
    assert net_text(value) == shown


def test_an_env_key_is_an_environment_variable_name(tmp_path: Path) -> None:
    bad = json.loads(json.dumps(SAMPLE_MEMORY))
    bad["tools"][0]["permissions"]["env"] = [{"key": "EXAMPLE-API KEY", "reason": "r"}]
    report = validate_extension(write(tmp_path / "bad", {"loca.json": bad, "index.ts": ENTRY}))
    [error] = report.errors
    assert error.pointer == "/tools/0/permissions/env/0/key"
    assert '"EXAMPLE-API KEY" is not an environment variable name' in error.message
    assert error.line is not None


def test_ports_other_than_a_list_or_star_are_refused_where_they_are(tmp_path: Path) -> None:
    bad = json.loads(json.dumps(SAMPLE_MEMORY))
    bad["tools"][0]["permissions"]["net"] = [{"host": "a.example", "ports": "any", "reason": "r"},
                                             {"host": "b.example", "ports": [443, 0], "reason": "r"}]
    report = validate_extension(write(tmp_path / "bad", {"loca.json": bad, "index.ts": ENTRY}))
    assert [(e.pointer, e.message) for e in report.errors] == [
        ("/tools/0/permissions/net/0/ports", 'expected a list of port numbers or "*", got "any"'),
        ("/tools/0/permissions/net/1/ports/1", "0: must be greater than or equal to 1")]


def test_a_capability_written_as_one_object_still_reads_as_before(tmp_path: Path) -> None:
    one = json.loads(json.dumps(SAMPLE_MEMORY))
    one["tools"][0]["permissions"] = {"memories": {"access": "write", "reason": "Save."}}
    folder = write(tmp_path / "one", {"loca.json": one, "index.ts": ENTRY})
    report = validate_extension(folder)
    assert report.valid
    consent = consent_of(report.manifest, version="1")
    assert [item.describe() for item in permission_items(consent["tools"]["sample_memory"])] == [
        "memories write"]


# --- the entry module, as Deno and Node find it -----------------------------------------

MOD = "export async function sampleMemory() { return 1; }\n"


@pytest.mark.parametrize(("files", "entry"), [
    ({"deno.json": {"exports": "./src/mod.ts", "imports": {"@std/assert": "jsr:@std/assert@1"}}},
     "src/mod.ts"),
    ({"deno.json": {"exports": {".": "./src/mod.ts", "./extra": "./src/extra.ts"}}}, "src/mod.ts"),
    ({"package.json": {"name": "loca-extension-x", "main": "lib/main.js"}}, "lib/main.js"),
    ({"package.json": {"main": "./lib/main"}}, "lib/main.js"),
    ({"package.json": {"main": "lib"}}, "lib/index.js"),
    ({"package.json": {"exports": "./lib/main.mjs"}}, "lib/main.mjs"),
    ({"package.json": {"exports": {".": "./lib/main.mjs", "./package.json": "./package.json"}}},
     "lib/main.mjs"),
    ({"package.json": {"exports": {"types": "./lib/main.d.ts", "require": "./lib/main.cjs",
                                   "import": "./lib/main.mjs"}}}, "lib/main.mjs"),
    ({"package.json": {"exports": {".": {"import": {"types": "./lib/main.d.ts",
                                                    "default": "./lib/main.mjs"},
                                         "require": "./lib/main.cjs"}}}}, "lib/main.mjs"),
    ({"package.json": {"exports": {".": {"default": "./lib/main.js"}}, "main": "lib/old.js"}},
     "lib/main.js"),
])
def test_the_entry_module_is_the_one_the_author_declared(tmp_path: Path, files, entry) -> None:
    folder = tmp_path / "ext"
    modules = {name: MOD for name in ("src/mod.ts", "lib/main.js", "lib/main.mjs", "lib/index.js",
                                      "lib/old.js", "index.ts")}
    write(folder, {"loca.json": SAMPLE_MEMORY, **modules, **files})
    found = find_entry(folder, None)
    assert found is not None and found.path == (folder / entry).resolve()
    assert found.runtime == "deno"
    assert validate_extension(folder).valid


def test_deno_json_wins_over_package_json_and_both_over_the_default_names(tmp_path: Path) -> None:
    folder = write(tmp_path / "ext", {"loca.json": SAMPLE_MEMORY, "index.ts": MOD, "mod.ts": MOD,
                                      "src/mod.ts": MOD, "lib/main.js": MOD,
                                      "deno.json": {"exports": "./src/mod.ts"},
                                      "package.json": {"main": "lib/main.js"}})
    assert entry_candidates(folder)[:3] == ("src/mod.ts", "lib/main.js", "index.ts")
    assert find_entry(folder, None).path == (folder / "src/mod.ts").resolve()
    (folder / "src/mod.ts").unlink()  # a missing export falls back, as a missing main does
    assert find_entry(folder, None).path == (folder / "lib/main.js").resolve()
    assert find_entry(folder, "mod.ts").path == (folder / "mod.ts").resolve()  # entry wins


def test_a_declared_export_beside_the_default_names_is_no_ambiguity(tmp_path: Path) -> None:
    folder = write(tmp_path / "ext", {"loca.json": SAMPLE_MEMORY, "index.ts": MOD, "src/mod.ts": MOD,
                                      "deno.json": {"exports": "./src/mod.ts"}})
    report = validate_extension(folder)
    assert report.valid and report.warnings == []
    (folder / "deno.json").unlink()
    (folder / "mod.ts").write_text(MOD)
    [warning] = validate_extension(folder).warnings
    assert warning.message == "index.ts and mod.ts all exist; index.ts is the entry module"


def test_an_export_that_leaves_the_folder_or_runs_nowhere_is_passed_over(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside", {"evil.ts": MOD})
    folder = write(tmp_path / "ext", {"loca.json": SAMPLE_MEMORY, "index.ts": MOD,
                                      "deno.json": {"exports": "../outside/evil.ts"},
                                      "package.json": {"exports": {".": "./main.cjs"},
                                                       "main": str(outside / "evil.ts")}})
    (folder / "link.ts").symlink_to(outside / "evil.ts")
    (folder / "deno.json").write_text(json.dumps({"exports": {".": "./link.ts"}}))
    assert find_entry(folder, None).path == (folder / "index.ts").resolve()
    (folder / "deno.json").write_text("{ not json")
    assert find_entry(folder, None).path == (folder / "index.ts").resolve()


def test_no_entry_names_every_place_looked(tmp_path: Path) -> None:
    folder = write(tmp_path / "ext", {"loca.json": SAMPLE_MEMORY,
                                      "deno.json": {"exports": "./src/mod.ts"}})
    report = validate_extension(folder)
    assert not report.valid
    assert "looked for src/mod.ts, index.ts, index.js, mod.ts, main.py" in report.errors[0].message


# --- "*" ports in the sandbox ----------------------------------------------------------


def test_a_host_with_any_port_is_denos_bare_host(tmp_path: Path) -> None:
    folder = write(tmp_path / "ext", {"loca.json": SAMPLE_MEMORY, "index.ts": MOD})
    dumped = Manifest.model_validate(SAMPLE_MEMORY).tools[0].permissions.model_dump(by_alias=True)
    granted = [r for r in requirements_of(dumped, roots=TemplateRoots.for_host(tmp_path),
                                          extension_dir=folder) if r.kind == "net"]
    granted += [type(granted[0])("net", "other.example:443,8443", "r")]
    policy = build_policy(runtime="deno", entry=folder / "index.ts", function="sampleMemory",
                          extension_dir=folder, granted=granted, cwd=tmp_path, limits=Limits(),
                          deno_dir=tmp_path / "deps", tool="sample_memory")
    assert [(e.host, e.ports) for e in policy.net] == [("api.example.com", ["*"]),
                                                       ("other.example", [443, 8443])]
    flags = [flag for flag in policy.deno["argv"] if flag.startswith("--allow-net")]
    assert flags == ["--allow-net=api.example.com,other.example:443,other.example:8443"]
