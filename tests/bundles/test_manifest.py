"""A bundle's manifest and file names: each bad one refused with the field named."""

from __future__ import annotations

import copy

import pytest
from bundle_samples import COUNT, MCP, SKILL

from workbench.core.bundles import check
from workbench.errors import ToolError


def changed(base: dict, *, manifest: dict | None = None, files: dict | None = None,
            drop: str | None = None) -> dict:
    bundle = copy.deepcopy(base)
    bundle["manifest"].update(manifest or {})
    if drop:
        del bundle["manifest"][drop]
    if files is not None:
        bundle["files"] = files
    return bundle


@pytest.mark.parametrize(("bundle", "words"), [
    (changed(COUNT, manifest={"schemaVersion": 2}), "manifest.schemaVersion: must be 1"),
    (changed(COUNT, manifest={"id": "Count Entries"}), "manifest.id: 'Count Entries' is not a bundle id"),
    (changed(COUNT, manifest={"kind": "plugin"}), "manifest.kind: must be one of tool, skill, mcp"),
    (changed(COUNT, manifest={"description": " "}), "manifest.description"),
    (changed(COUNT, manifest={"entrypoint": "main.mjs"}), "manifest.entrypoint: 'main.mjs' is not one of the files"),
    (changed(COUNT, manifest={"entrypoint": "x.py"}, files={"x.py": "print(1)"}),
     "manifest.entrypoint: must be a .mjs (ES module), .js or .cjs"),
    (changed(COUNT, drop="inputSchema"), "manifest.inputSchema: a tool needs one"),
    (changed(COUNT, manifest={"inputSchema": {"type": "string"}}), "manifest.inputSchema: must be a JSON Schema of an object"),
    (changed(COUNT, manifest={"inputSchema": {"type": "object", "properties": {"a": {"type": "nope"}}}}),
     "manifest.inputSchema/properties/a/type: not a valid JSON Schema"),
    (changed(COUNT, manifest={"timeoutMs": 10}), "manifest.timeoutMs: must be an integer from 100 to 120000"),
    (changed(COUNT, manifest={"dependencies": {"left-pad": "1"}}), "manifest.dependencies: is not a manifest field"),
    (changed(COUNT, manifest={"inputSchema": {"type": "object", "minimum": 1e-5}}),
     "as a plain decimal fraction"),
    (changed(SKILL, manifest={"entrypoint": "style.md"}), "manifest.entrypoint: a skill's entrypoint is its SKILL.md"),
    (changed(SKILL, manifest={"references": ["missing.md"]}), "manifest.references: must list files of the bundle"),
    (changed(MCP, manifest={"references": []}), "manifest.references: only a skill has references"),
])
def test_a_bad_manifest_is_refused_naming_the_field(bundle: dict, words: str):
    with pytest.raises(ToolError) as caught:
        check(bundle)
    assert words in caught.value.message
    assert caught.value.kind == "invalid_arguments"


ENTRY = COUNT["files"]["index.mjs"]


@pytest.mark.parametrize(("files", "words"), [
    ({"index.mjs": ENTRY, "../escape.js": "x"}, "no part of the name may be empty, '.' or '..'"),
    ({"index.mjs": ENTRY, "a/./b.js": "x"}, "no part of the name may be empty"),
    ({"index.mjs": ENTRY, "a//b.js": "x"}, "no part of the name may be empty"),
    ({"index.mjs": ENTRY, "/etc/passwd": "x"}, "must be relative"),
    ({"index.mjs": ENTRY, "C:/x.js": "x"}, "must be relative"),
    ({"index.mjs": ENTRY, "a\\b.js": "x"}, "no backslash"),
    ({"index.mjs": ENTRY, "evil\u202egnp.js": "x"}, "U+202E"),
    ({"index.mjs": ENTRY, "bell\x07.js": "x"}, "U+0007"),
    ({"index.mjs": ENTRY, "esc\x1b[2J.js": "x"}, "U+001B"),
    ({"index.mjs": ENTRY, "package.json": "{}"}, "bundles ship no package.json"),
    ({"index.mjs": ENTRY, "lib/node_modules/x/index.js": "x"}, "no dependencies"),
    ({"index.mjs": ENTRY, ".wb/runner.mjs": "x"}, "the folder .wb is the runtime's own"),
    ({"index.mjs": ENTRY, "/".join("d" * 9) + ".js": "x"}, "folders deep"),
    ({"index.mjs": ENTRY, "n" * 201: "x"}, "longer than 200"),
    ({"index.mjs": ENTRY, "big.txt": "x" * (256 * 1024 + 1)}, "a file holds at most 262144"),
    ({"index.mjs": ENTRY, **{f"f{i}.txt": "x" for i in range(64)}}, "a bundle holds at most 64"),
    ({"index.mjs": ENTRY, **{f"f{i}.txt": "x" * 250_000 for i in range(5)}}, "a bundle holds at most 1048576"),
    ({"index.mjs": ENTRY, "a": "x", "a/b.js": "y"}, "is both a file and a folder"),
    ({"index.mjs": ENTRY, "lone.txt": "\udc00"}, "lone surrogate"),
    ({"index.mjs": 42}, "must be the file's text"),
    ({}, "at least one"),
])
def test_a_bad_file_name_or_size_is_refused_naming_the_file(files: dict, words: str):
    with pytest.raises(ToolError) as caught:
        check(changed(COUNT, files=files))
    assert words in caught.value.message


def test_a_bundle_holds_only_a_manifest_and_files():
    with pytest.raises(ToolError, match='install: is not part of a bundle'):
        check({**COUNT, "install": "npm i"})
    with pytest.raises(ToolError, match="bundle: must be an object"):
        check(["manifest"])


def test_a_valid_bundle_answers_its_metadata_and_digest_without_its_text():
    found = check(SKILL)
    assert (found["valid"], found["written"], found["kind"]) == (True, False, "skill")
    assert found["files"] == ["SKILL.md", "style.md", "unlisted.txt"]
    assert len(found["digest"]) == 64 and "List what changed" not in str(found)
