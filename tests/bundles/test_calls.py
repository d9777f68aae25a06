"""Bundles made and called through the tools, as the model calls them, under Node and
under Deno's Node compatibility alike: a tool (ES module, CommonJS, a default export),
a skill, an MCP server; revisions kept side by side; a list that shows metadata only."""

from __future__ import annotations

import json

from bundle_samples import COUNT, MCP, SKILL, tool_bundle


async def test_the_seed_example_is_created_and_called_by_its_digest(bundle_lab, runtime):
    made = await bundle_lab.manage(action="create", bundle=COUNT)
    assert made["created"] is True and made["call_with"] == {"id": "count-entries", "digest": made["digest"]}
    assert bundle_lab.revision("count-entries", made["digest"]).is_dir()
    answer = await bundle_lab.call(id="count-entries", digest=made["digest"], input={"a": 1, "b": [2], "c": None})
    assert answer["result"] == {"count": 3}
    assert answer["runtime"] == runtime


async def test_an_id_keeps_several_revisions_and_each_digest_calls_its_own(bundle_lab):
    first = await bundle_lab.manage(action="create", bundle=COUNT)
    second = await bundle_lab.manage(action="create", bundle=tool_bundle(
        "export default (input) => ({ keys: Object.keys(input).sort() })"))
    again = await bundle_lab.manage(action="create", bundle=COUNT)
    assert first["digest"] != second["digest"]
    assert (again["digest"], again["created"]) == (first["digest"], False)
    listed = (await bundle_lab.manage(action="list"))["bundles"]
    assert sorted(row["digest"] for row in listed) == sorted([first["digest"], second["digest"]])
    assert all(row["state"] == "ok" and set(row) == {"id", "digest", "kind", "description", "entrypoint",
                                                     "files", "bytes", "state"} for row in listed)
    assert "Object.keys" not in json.dumps(listed)  # metadata only
    one = await bundle_lab.call(id="count-entries", digest=first["digest"], input={"x": 1})
    two = await bundle_lab.call(id="count-entries", digest=second["digest"], input={"y": 1, "x": 2})
    assert (one["result"], two["result"]) == ({"count": 1}, {"keys": ["x", "y"]})


async def test_js_and_cjs_are_commonjs_even_when_the_workspace_declares_a_module(bundle_lab):
    (bundle_lab.project / "package.json").write_text('{"type": "module"}')
    for entry, code in (("tool.js", "exports.run = (i) => ({ kind: typeof require, n: i.n * 2 })"),
                        ("tool.cjs", "module.exports = async (i) => ({ kind: typeof module, n: i.n + 1 })"),
                        ("lib/tool.mjs", "import { helper } from './helper.mjs';\n"
                                         "export async function run(i) { return { kind: typeof require, n: helper(i.n) } }")):
        files = {entry: code, "lib/helper.mjs": "export const helper = (n) => n - 1;"}
        bundle = {**tool_bundle(code, entry=entry, bundle_id="modules"), "files": files}
        made = await bundle_lab.manage(action="create", bundle=bundle)
        answer = await bundle_lab.call(id="modules", digest=made["digest"], input={"n": 10})
        expected = {"tool.js": {"kind": "function", "n": 20}, "tool.cjs": {"kind": "object", "n": 11},
                    "lib/tool.mjs": {"kind": "undefined", "n": 9}}[entry]
        assert answer["result"] == expected, entry


async def test_the_input_is_checked_against_the_input_schema(bundle_lab):
    bundle = tool_bundle("export const run = (i) => i", inputSchema={
        "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    made = await bundle_lab.manage(action="create", bundle=bundle)
    error = await bundle_lab.failed("extension_call", id="count-entries", digest=made["digest"], input={"n": "ten"})
    assert error["kind"] == "invalid_arguments" and "input/n: does not match" in error["message"]
    assert (await bundle_lab.call(id="count-entries", digest=made["digest"], input={"n": 3}))["result"] == {"n": 3}


async def test_a_result_that_is_not_finite_json_is_refused(bundle_lab):
    for code, words in (("export const run = () => ({ x: Infinity })", "result.x is Infinity"),
                        ("export const run = () => { const a = {}; a.a = a; return a }", "refers to itself"),
                        ("export const run = () => new Map()", "is [object Map], not plain JSON"),
                        ("export const run = () => undefined", "returned nothing"),
                        ("export const other = 1", "exports neither run(input) nor a default function"),
                        ("export const run = () => { throw new Error('no way') }", "no way")):
        made = await bundle_lab.manage(action="create", bundle=tool_bundle(code, bundle_id="bad-result"))
        error = await bundle_lab.failed("extension_call", id="bad-result", digest=made["digest"], input={})
        assert error["kind"] == "tool" and words in error["message"], (code, error)


async def test_a_skill_returns_its_skill_md_and_references_as_data(bundle_lab):
    made = await bundle_lab.manage(action="create", bundle=SKILL)
    answer = await bundle_lab.call(id="release-notes", digest=made["digest"])
    assert answer["skill"].startswith("# Release notes")
    assert answer["references"] == [{"path": "style.md", "text": "Short sentences. No jargon.\n"}]
    inspected = await bundle_lab.manage(action="inspect", id="release-notes", digest=made["digest"])
    assert inspected["references"] == ["style.md"]


async def test_an_mcp_bundle_is_inspected_and_its_tool_called(bundle_lab, runtime):
    made = await bundle_lab.manage(action="create", bundle=MCP)
    inspected = await bundle_lab.manage(action="inspect", id="shout", digest=made["digest"])
    assert inspected["server"] == {"name": "shout", "version": "1.0.0"}
    assert [(t["name"], t["inputSchema"]["required"]) for t in inspected["tools"]] == [("shout", ["text"])]
    answer = await bundle_lab.call(id="shout", digest=made["digest"], tool_name="shout", input={"text": "hey"})
    assert answer["result"]["content"] == [{"type": "text", "text": "HEY"}]
    assert answer["runtime"] == runtime
    missing = await bundle_lab.failed("extension_call", id="shout", digest=made["digest"], tool_name="whisper", input={})
    assert "has no tool \"whisper\" (it lists: shout)" in missing["message"]
    unnamed = await bundle_lab.failed("extension_call", id="shout", digest=made["digest"], input={})
    assert "tool_name" in unnamed["message"]


async def test_validate_writes_nothing(bundle_lab):
    found = await bundle_lab.manage(action="validate", bundle=COUNT)
    assert found["valid"] and not (bundle_lab.project / ".workbench").exists()


async def test_listing_validating_creating_and_inspecting_run_nothing(bundle_lab):
    ran: list[str] = []
    real = bundle_lab.service.runner.run

    async def counted(bundle, **kwargs):
        ran.append(bundle.id)
        return await real(bundle, **kwargs)

    bundle_lab.service.runner.run = counted  # the seam every entrypoint runs through
    for bundle in (COUNT, SKILL):
        await bundle_lab.manage(action="validate", bundle=bundle)
        made = await bundle_lab.manage(action="create", bundle=bundle)
        await bundle_lab.manage(action="inspect", id=bundle["manifest"]["id"], digest=made["digest"])
    await bundle_lab.manage(action="list")
    await bundle_lab.call(id="release-notes", digest=made["digest"])  # a skill runs nothing either
    assert ran == []
    await bundle_lab.manage(action="create", bundle=MCP)
    assert ran == []


async def test_the_staging_folder_is_gone_after_each_call(bundle_lab):
    made = await bundle_lab.manage(action="create", bundle=COUNT)
    await bundle_lab.call(id="count-entries", digest=made["digest"], input={})
    await bundle_lab.failed("extension_call", id="count-entries", digest=made["digest"], input=[1])
    assert not list((bundle_lab.host.workspace.home.cache_dir / "bundles").glob("run-*"))


async def test_create_is_reviewed_as_a_write_when_the_chat_reviews_writes(tmp_path, home):
    from bundle_samples import Grants

    from workbench.core.calls import CallOptions
    from workbench.core.host import Host

    project = tmp_path / "reviewed"
    project.mkdir()
    home.config_file.write_text('[tools]\nreview_writes = "always"\n')
    for verdict in ("reject", "accept"):
        person = Grants(verdict)
        async with Host.open(cwd=project, model="echo", responder=person) as host:
            session_id = host.chats.new("t")["id"]
            done = await host.tools.call("extension_manage", {"action": "create", "bundle": COUNT},
                                         CallOptions(caller="model", session_id=session_id))
        [form] = person.forms()
        question = form.questions[0]
        assert question["kind"] == "diff" and "index.mjs" in question["after"]
        if verdict == "reject":
            assert not done.ok and "rejected; nothing was written" in done.error["message"]
            assert not (project / ".workbench" / "bundles" / "count-entries").exists()
        else:
            assert done.ok and (project / ".workbench" / "bundles" / "count-entries" / done.result["digest"]).is_dir()
