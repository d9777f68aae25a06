"""The digest's canonical encoding, recomputed apart from the code that makes it: by a
Node one-liner written from docs/bundles.md, and by hand in Python."""

from __future__ import annotations

import hashlib
import json
import subprocess

from bundle_samples import COUNT, MCP, SKILL

from workbench.core.bundles import check

RECOMPUTE = r"""
const crypto = require("node:crypto");
const sorted = (v) => Array.isArray(v) ? v.map(sorted) : (v && typeof v === "object")
  ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])])) : v;
let text = "";
process.stdin.on("data", (c) => text += c).on("end", () => {
  const b = JSON.parse(text);
  const doc = JSON.stringify(sorted({ files: b.files, manifest: b.manifest }));
  process.stdout.write(crypto.createHash("sha256").update(doc, "utf8").digest("hex"));
});
"""

ODD = {"manifest": {"schemaVersion": 1, "id": "odd-text", "kind": "tool", "description": "é ✓ \u2028 \"quoted\"",
                    "entrypoint": "a/b/z.cjs", "timeoutMs": 5000.0,
                    "inputSchema": {"type": "object", "properties": {"n": {"type": "number", "minimum": 0.5}}}},
       "files": {"a/b/z.cjs": "module.exports = () => ({tab: '\t', nl: '\\n'})\n\x01\x7f",
                 "B.md": "upper case sorts first", "a/a.txt": "ünïcödé"}}


def node_digest(bundle: dict) -> str:
    done = subprocess.run(["node", "-e", RECOMPUTE], input=json.dumps(bundle), capture_output=True,
                          text=True, check=True, timeout=30)
    return done.stdout


def test_node_recomputes_every_digest_from_the_documented_encoding():
    for bundle in (COUNT, MCP, SKILL, ODD):
        assert check(bundle)["digest"] == node_digest(bundle)


def test_the_encoding_by_hand_gives_the_same_digest():
    files = "".join(f"{json.dumps(k)}:{json.dumps(v, ensure_ascii=False)}," for k, v in sorted(COUNT["files"].items()))
    manifest = json.dumps(COUNT["manifest"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    text = '{"files":{' + files.rstrip(",") + '},"manifest":' + manifest + "}"
    assert check(COUNT)["digest"] == hashlib.sha256(text.encode()).hexdigest()


def test_an_integral_float_is_written_as_the_integer_javascript_writes():
    assert check(ODD)["digest"] == check({**ODD, "manifest": {**ODD["manifest"], "timeoutMs": 5000}})["digest"]


def test_any_change_to_a_file_or_the_manifest_changes_the_digest():
    base = check(COUNT)["digest"]
    changed_file = {**COUNT, "files": {"index.mjs": COUNT["files"]["index.mjs"] + " "}}
    changed_manifest = {**COUNT, "manifest": {**COUNT["manifest"], "description": "Counts!"}}
    renamed = {"manifest": {**COUNT["manifest"], "entrypoint": "main.mjs"},
               "files": {"main.mjs": COUNT["files"]["index.mjs"]}}
    assert len({base, check(changed_file)["digest"], check(changed_manifest)["digest"],
                check(renamed)["digest"]}) == 4
