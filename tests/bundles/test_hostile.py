"""Hostile bundles, under Node and under Deno alike: a wrong digest, a file swapped after
creation, a link swapped in, a path out of the bundle, an entrypoint that hangs, forks,
floods its output, writes outside, reads what it was not given, prints terminal escapes."""

from __future__ import annotations

import json
import os
import uuid

from bundle_samples import COUNT, MCP, tool_bundle
from processes import processes_with


async def made(lab, bundle) -> str:
    return (await lab.manage(action="create", bundle=bundle))["digest"]


async def test_a_digest_that_is_not_the_revisions_is_refused(bundle_lab):
    digest = await made(bundle_lab, COUNT)
    wrong = ("0" if digest[0] != "0" else "1") + digest[1:]
    error = await bundle_lab.failed("extension_call", id="count-entries", digest=wrong, input={})
    assert error["kind"] == "not_found" and f"has no revision {wrong}" in error["message"]
    short = await bundle_lab.failed("extension_call", id="count-entries", digest=digest[:12], input={})
    assert "is not a digest" in short["message"]
    other = await bundle_lab.failed("extension_call", id="../count-entries", digest=digest, input={})
    assert "is not a bundle id" in other["message"]


async def test_a_file_changed_after_creation_is_refused_at_every_use(bundle_lab):
    digest = await made(bundle_lab, COUNT)
    entry = bundle_lab.revision("count-entries", digest) / "files" / "index.mjs"
    os.chmod(entry, 0o644)
    entry.write_text("export function run() { return { count: 'pwned' } }")
    for tool, arguments in (("extension_call", {"input": {}}), ("extension_manage", {"action": "inspect"})):
        error = await bundle_lab.failed(tool, id="count-entries", digest=digest, **arguments)
        assert error["kind"] == "permission"
        assert "no longer match its digest" in error["message"] and "refused" in error["message"]
    [row] = (await bundle_lab.manage(action="list"))["bundles"]
    assert row["state"] == "refused" and "no longer match" in row["why"]


async def test_a_file_added_to_a_revision_or_its_manifest_changed_is_refused(bundle_lab):
    digest = await made(bundle_lab, COUNT)
    revision = bundle_lab.revision("count-entries", digest)
    (revision / "files" / "extra.mjs").write_text("1")
    error = await bundle_lab.failed("extension_call", id="count-entries", digest=digest, input={})
    assert "no longer match its digest" in error["message"]
    (revision / "files" / "extra.mjs").unlink()
    assert (await bundle_lab.call(id="count-entries", digest=digest, input={"a": 1}))["result"] == {"count": 1}
    manifest = revision / "manifest.json"
    os.chmod(manifest, 0o644)
    manifest.write_text(manifest.read_text().replace("A test tool", "Another tool"))
    error = await bundle_lab.failed("extension_call", id="count-entries", digest=digest, input={})
    assert "no longer match its digest" in error["message"]


async def test_a_symlink_swapped_in_is_refused_and_never_followed(bundle_lab, tmp_path):
    digest = await made(bundle_lab, COUNT)
    outside = tmp_path / "outside.mjs"
    outside.write_text(COUNT["files"]["index.mjs"])  # the same text: only the link differs
    entry = bundle_lab.revision("count-entries", digest) / "files" / "index.mjs"
    entry.unlink()
    entry.symlink_to(outside)
    error = await bundle_lab.failed("extension_call", id="count-entries", digest=digest, input={})
    assert error["kind"] == "permission" and "index.mjs in the revision is a symbolic link" in error["message"]
    # A link in place of the revision folder, or of the store itself, is refused too.
    entry.unlink()
    revision = bundle_lab.revision("count-entries", digest)
    elsewhere = tmp_path / "elsewhere"
    revision.rename(elsewhere)
    (elsewhere / "files" / "index.mjs").write_text(COUNT["files"]["index.mjs"])
    revision.symlink_to(elsewhere)
    error = await bundle_lab.failed("extension_call", id="count-entries", digest=digest, input={})
    assert error["kind"] == "permission" and "with no link followed" in error["message"]


async def test_a_path_outside_the_bundle_is_refused_and_nothing_is_written(bundle_lab, tmp_path):
    for name in ("../../escape.mjs", "/tmp/escape.mjs", "a/../../escape.mjs"):
        bundle = {**COUNT, "files": {**COUNT["files"], name: "x"}}
        error = await bundle_lab.failed("extension_manage", action="create", bundle=bundle)
        assert error["kind"] == "invalid_arguments" and f"files[{name!r}]" in error["message"]
    assert not (bundle_lab.project / ".workbench").exists()
    assert not (bundle_lab.project.parent / "escape.mjs").exists()


async def test_a_store_folder_that_is_a_link_is_refused_on_create(bundle_lab, tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    (bundle_lab.project / ".workbench").symlink_to(target)
    error = await bundle_lab.failed("extension_manage", action="create", bundle=COUNT)
    assert error["kind"] == "permission" and "links are never followed" in error["message"]
    assert list(target.iterdir()) == []


async def test_an_entrypoint_that_hangs_is_stopped_at_its_time_limit(bundle_lab):
    marker = uuid.uuid4().hex
    digest = await made(bundle_lab, tool_bundle(
        f"// {marker}\nexport function run() {{ for (;;) {{}} }}", timeoutMs=1500))
    error = await bundle_lab.failed("extension_call", id="count-entries", digest=digest, input={})
    assert error["kind"] == "timeout" and "did not answer within 1.5 s" in error["message"]
    assert processes_with(marker) == []


async def test_a_forked_grandchild_does_not_outlive_the_call(bundle_lab):
    marker = uuid.uuid4().hex
    code = ("import { spawn } from 'node:child_process';\n"
            f"export function run() {{ const c = spawn('/bin/sh', ['-c', 'sleep 300 # {marker}'], "
            "{ detached: true, stdio: 'ignore' }); c.unref(); return { pid: c.pid } }")
    digest = await made(bundle_lab, tool_bundle(code))
    answer = await bundle_lab.call(id="count-entries", digest=digest, input={})
    assert isinstance(answer["result"]["pid"], int)
    assert processes_with(marker) == []  # its PID namespace ended with the runtime


async def test_an_entrypoint_that_floods_its_output_fails_as_too_large(bundle_lab):
    code = ("export function run() { const line = 'x'.repeat(65536);"
            " for (let i = 0; i < 64; i++) console.log(line); return {} }")
    digest = await made(bundle_lab, tool_bundle(code))
    error = await bundle_lab.failed("extension_call", id="count-entries", digest=digest, input={})
    assert error["kind"] == "output_too_large"
    big = await made(bundle_lab, tool_bundle("export const run = () => ({ s: 'y'.repeat(3 * 1024 * 1024) })",
                                             bundle_id="big-result"))
    error = await bundle_lab.failed("extension_call", id="big-result", digest=big, input={})
    assert error["kind"] == "output_too_large"


async def test_an_oversized_input_is_refused_before_anything_runs(bundle_lab):
    digest = await made(bundle_lab, COUNT)
    error = await bundle_lab.failed("extension_call", id="count-entries", digest=digest,
                                    input={"a": "z" * (300 * 1024)})
    assert error["kind"] == "invalid_arguments" and "at most 262144" in error["message"]


async def test_writes_outside_the_staging_folder_reach_nothing(bundle_lab):
    target = bundle_lab.project / "written-by-bundle.txt"
    code = ("import { writeFileSync } from 'node:fs';\n"
            "export function run(i) { const out = {};\n"
            "  for (const p of i.paths) { try { writeFileSync(p, 'pwned'); out[p] = 'written' }"
            " catch (e) { out[p] = e.code || 'refused' } }\n"
            "  writeFileSync('bundle/scratch.txt', 'local'); return out }")
    digest = await made(bundle_lab, tool_bundle(code))
    paths = [str(target), "/etc/bundle-pwned", str(bundle_lab.revision("count-entries", digest) / "x")]
    answer = await bundle_lab.call(id="count-entries", digest=digest, input={"paths": paths})
    assert all(state != "written" for state in answer["result"].values()), answer
    assert not target.exists() and not os.path.exists("/etc/bundle-pwned")
    # The revision is untouched (its own scratch write went to the staging folder).
    assert (await bundle_lab.call(id="count-entries", digest=digest, input={"paths": []}))["result"] == {}


async def test_a_file_it_was_not_given_cannot_be_read(bundle_lab, home):
    secret = bundle_lab.project / "secret.env"
    secret.write_text("TOKEN=hunter2")
    code = ("import { readFileSync } from 'node:fs';\n"
            "export function run(i) { const out = {}; for (const p of i.paths) {"
            " try { out[p] = readFileSync(p, 'utf8') } catch (e) { out[p] = 'refused' } } return out }")
    digest = await made(bundle_lab, tool_bundle(code))
    paths = [str(secret), str(home.root / "workbench.db"), "/proc/1/environ"]
    answer = await bundle_lab.call(id="count-entries", digest=digest, input={"paths": paths})
    assert answer["result"][str(secret)] == "refused" and "hunter2" not in json.dumps(answer)
    assert answer["result"][str(home.root / "workbench.db")] == "refused"


async def test_environment_is_minimal(bundle_lab, monkeypatch):
    monkeypatch.setenv("WORKBENCH_TEST_SECRET", "s3cret")
    digest = await made(bundle_lab, tool_bundle("export const run = () => ({ env: { ...process.env } })"))
    env = (await bundle_lab.call(id="count-entries", digest=digest, input={}))["result"]["env"]
    assert "WORKBENCH_TEST_SECRET" not in env and "s3cret" not in json.dumps(env)
    assert set(env) <= {"PATH", "HOME", "LANG", "LC_ALL", "TERM", "TMPDIR", "PWD", "SHLVL", "_",
                        "PYTHONDONTWRITEBYTECODE", "DENO_DIR", "DENO_NO_UPDATE_CHECK", "NO_COLOR", "OLDPWD"}


async def test_terminal_escapes_it_prints_are_made_visible(bundle_lab):
    code = ("export function run() { console.log('\\x1b[2J\\x1b]0;owned\\x07 \\u202e'); "
            "return { said: '\\x1b[31mred' } }")
    digest = await made(bundle_lab, tool_bundle(code))
    answer = await bundle_lab.call(id="count-entries", digest=digest, input={})
    assert "\x1b" not in answer["log"] and "\\u001b[2J" in answer["log"] and "\\u202e" in answer["log"]
    assert answer["result"] == {"said": "\x1b[31mred"}  # data, escaped wherever it is shown


async def test_an_mcp_server_that_floods_or_breaks_the_protocol_fails_its_call(bundle_lab):
    flood = {**MCP, "manifest": {**MCP["manifest"], "id": "flood"}, "files": {"server.js":
             "process.stdout.write('x'.repeat(4 * 1024 * 1024)); setInterval(() => {}, 1000);"}}
    digest = await made(bundle_lab, flood)
    error = await bundle_lab.failed("extension_manage", action="inspect", id="flood", digest=digest)
    assert error["kind"] in ("tool", "output_too_large")
    garbage = {**MCP, "manifest": {**MCP["manifest"], "id": "garbage"},
               "files": {"server.js": "process.stdout.write('not json\\n'); setInterval(() => {}, 1000);"}}
    digest = await made(bundle_lab, garbage)
    error = await bundle_lab.failed("extension_manage", action="inspect", id="garbage", digest=digest)
    assert "not JSON" in error["message"]
    hang = {**MCP, "manifest": {**MCP["manifest"], "id": "silent", "timeoutMs": 1500},
            "files": {"server.js": "setInterval(() => {}, 1000);"}}
    digest = await made(bundle_lab, hang)
    error = await bundle_lab.failed("extension_call", id="silent", digest=digest, tool_name="x", input={})
    assert error["kind"] == "timeout"


async def test_a_machine_that_cannot_isolate_the_runtime_refuses_the_call_saying_why(bundle_lab):
    digest = await made(bundle_lab, COUNT)
    report = await bundle_lab.host.sandbox.report()
    bundle_lab.host.sandbox._report = {**report, "checks": [
        c if c["name"] != "shell-overlay" else {**c, "ok": False, "detail": "overlayfs refused"}
        for c in report["checks"]]}
    error = await bundle_lab.failed("extension_call", id="count-entries", digest=digest, input={})
    assert error["kind"] == "unavailable" and "shell-overlay: overlayfs refused" in error["message"]
    assert not list((bundle_lab.host.workspace.home.cache_dir / "bundles").glob("run-*"))
