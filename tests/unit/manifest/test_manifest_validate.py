"""Static validation of extension folders: every check, each named by its exact pointer."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from workbench.errors import ManifestError
from workbench.manifest.models import Manifest
from workbench.manifest.validate import load_manifest, validate_extension

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "extensions"


def write_ext(folder: Path, manifest: dict | str, files: dict[str, str] | None = None) -> Path:
    """Write an extension: `loca.json` (a dict is dumped with indent 2) and other files."""
    folder.mkdir(parents=True, exist_ok=True)
    text = manifest if isinstance(manifest, str) else json.dumps(manifest, indent=2)
    (folder / "loca.json").write_text(text, encoding="utf-8")
    for name, content in (files or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(content, encoding="utf-8")
    return folder


def tool(name: str = "word_count", function: str = "wordCount", **fields) -> dict:
    entry = {
        "name": name,
        "description": "Count the words in a text. Use when asked how long something is.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                       "required": ["text"]},
        "function": function,
    }
    entry.update(fields)
    return entry


def manifest(**fields) -> dict:
    base = {"name": "loca-extension-test", "displayName": "Test",
            "description": "An extension for the tests."}
    base.update(fields)
    return base


TS_ENTRY = """\
// The entry module.
import type { ToolContext } from "./types.ts";

export async function wordCount(args: { text: string }, ctx: ToolContext) {
  return { words: args.text.split(/\\s+/).length };
}

export const lineCount = async (args: { text: string }) => args.text.split("\\n").length;

function count(args: { text: string }) {
  return args.text.length;
}
export { count as charCount };
export * from "./lib/more.ts";
"""

PY_ENTRY = """\
\"\"\"Tools of the test extension.\"\"\"

import json


async def word_count(args, ctx):
    return {"words": len(args["text"].split())}


def line_count(args, ctx):
    return len(args["text"].splitlines())


char_count = len
"""


def pointers(problems) -> list[str]:
    return [problem.pointer for problem in problems]


def only_error(report, pointer: str):
    """Return the one error of the report, checking it sits at `pointer`."""
    assert pointers(report.errors) == [pointer], report.to_json()
    assert not report.valid and report.manifest is None
    return report.errors[0]


@pytest.fixture
def ts_ext(tmp_path: Path) -> Path:
    return write_ext(tmp_path / "ts", manifest(tools=[
        tool("word_count", "wordCount", permissions={
            "net": [{"host": "*", "ports": [443], "reason": "Fetch the text."}],
            "read": [{"path": "$home", "reason": "Read your files."}],
            "write": [{"path": "$downloads/out", "reason": "Save the result."}],
            "memories": {"access": "read", "reason": "Look things up."},
            "llm": [{"reason": "Summarize.", "optional": True}],
        }, triggers=["how many words"], platforms=["linux", "darwin"], timeoutMs=1000),
        tool("line_count", "lineCount"),
        tool("char_count", "charCount", alwaysAvailable=True),
        tool("shout", "shout"),
    ]), {
        "index.ts": TS_ENTRY,
        "types.ts": "export interface ToolContext { setProgress(p: number): void }\n",
        "lib/more.ts": "export function shout(args: { text: string }) {\n"
                       "  return args.text.toUpperCase();\n}\n",
        "deno.json": '{"imports": {"@std/assert": "jsr:@std/assert@^1"}}\n',
    })


@pytest.fixture
def py_ext(tmp_path: Path) -> Path:
    return write_ext(tmp_path / "py", manifest(tools=[
        tool("word_count", "word_count"), tool("line_count", "line_count"),
        tool("char_count", "char_count"),
    ]), {"main.py": PY_ENTRY})


@pytest.fixture
def memories_ext(tmp_path: Path) -> Path:
    return write_ext(tmp_path / "mem", manifest(memories=[
        {"kind": "knowledge", "path": "memories/overview.md"},
        {"kind": "skill", "path": "memories/web-research"},
    ]), {
        "memories/overview.md": "# Overview\n\nReference data.\n",
        "memories/web-research/SKILL.md": "---\nname: web-research\n"
                                          "description: Research a topic on the web.\n---\n\n"
                                          "1. Search.\n2. Read.\n",
        "memories/web-research/sources.md": "A list of good sources.\n",
    })


# Valid extensions.

def test_valid_typescript_extension(ts_ext: Path) -> None:
    report = validate_extension(ts_ext)
    assert report.valid, report.to_json()
    assert report.errors == [] and report.warnings == []
    assert isinstance(report.manifest, Manifest)
    assert [t.name for t in report.manifest.tools] == ["word_count", "line_count", "char_count",
                                                       "shout"]
    assert report.manifest.runtime(ts_ext) == "deno"


def test_valid_python_extension(py_ext: Path) -> None:
    report = validate_extension(py_ext)
    assert report.valid and report.errors == [] and report.warnings == [], report.to_json()
    assert report.manifest.runtime(py_ext) == "python"


def test_valid_memories_only_extension_needs_no_entry(memories_ext: Path) -> None:
    report = validate_extension(memories_ext)
    assert report.valid and report.errors == [] and report.warnings == [], report.to_json()
    assert [m.kind for m in report.manifest.memories] == ["knowledge", "skill"]


def test_manifest_file_path_is_accepted(ts_ext: Path) -> None:
    assert validate_extension(ts_ext / "loca.json").valid


def test_sibling_manifest_name_is_accepted(py_ext: Path) -> None:
    (py_ext / "loca.json").rename(py_ext / "tomat.json")
    assert validate_extension(py_ext).valid


def test_validation_runs_none_of_the_code(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    folder = write_ext(tmp_path / "ext", manifest(tools=[tool("t", "t")]), {
        "main.py": f"open({str(marker)!r}, 'w').write('ran')\n\ndef t(args, ctx):\n    pass\n",
    })
    assert validate_extension(folder).valid
    assert not marker.exists()


def test_checked_in_wordcount_fixture_is_valid() -> None:
    report = validate_extension(FIXTURES / "wordcount-ts")
    assert report.valid and report.warnings == [], report.to_json()
    assert report.manifest.tools[0].name == "word_count"


def test_checked_in_broken_fixture_names_each_error() -> None:
    report = validate_extension(FIXTURES / "broken")
    assert not report.valid
    assert pointers(report.errors) == [
        "/color",
        "/tools/0/name",
        "/tools/0/parameters/properties/url/type",
        "/tools/0/function",
        "/tools/0/platforms/0",
        "/tools/0/permissions/net/0/ports/0",
        "/tools/0/permissions/read/0/path",
        "/tools/0/permissions/write/0/path",
        "/tools/0/permissions/memories/access",
        "/tools/0/permissions/llm/reason",
        "/tools/1/parameters/type",
        "/tools/2/name",
        "/tools/2/function",
        "/tools/2/alwaysAvailable",
        "/tools/2/timeoutMs",
        "/memories/0/path",
        "/memories/1/path",
        "/memories/2/path",
    ]
    assert pointers(report.warnings) == ["/tools/1/trigers"]
    assert all(p.line is not None and p.column is not None for p in report.errors)


# The document: reading, size and syntax.

def test_json_syntax_error_has_line_and_column(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, '{\n  "name": "x",\n  "displayName": }\n')
    error = only_error(validate_extension(folder), "")
    assert (error.line, error.column) == (3, 18)
    assert error.message.startswith("not valid JSON: Expecting value")


def test_nan_is_not_json(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, '{"name": NaN}')
    assert "NaN" in only_error(validate_extension(folder), "").message


def test_not_utf8(tmp_path: Path) -> None:
    tmp_path.joinpath("loca.json").write_bytes(b'{"name": "\xff"}')
    assert "UTF-8" in only_error(validate_extension(tmp_path), "").message


def test_top_level_must_be_an_object(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, "[1, 2]")
    assert "JSON object" in only_error(validate_extension(folder), "").message


def test_manifest_over_the_size_cap(tmp_path: Path) -> None:
    text = json.dumps(manifest()) + " " * (1024 * 1024)
    folder = write_ext(tmp_path, text)
    error = only_error(validate_extension(folder), "")
    assert "limit" in error.message and error.line is None
    assert validate_extension(folder, max_manifest_bytes=2 * 1024 * 1024).valid


def test_folder_over_the_size_cap(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, manifest(), {"data/blob.bin": "x" * 5000})
    error = only_error(validate_extension(folder, max_folder_bytes=4096), "")
    assert "larger than 4096 bytes" in error.message
    assert error.line is None and error.column is None


def test_missing_path_and_folder_without_manifest(tmp_path: Path) -> None:
    assert "does not exist" in only_error(validate_extension(tmp_path / "nope"), "").message
    assert "holds no loca.json" in only_error(validate_extension(tmp_path), "").message


def test_repeated_key_is_an_error_at_the_repeat(tmp_path: Path) -> None:
    text = '{\n  "name": "a",\n  "displayName": "A",\n  "description": "d",\n  "name": "b"\n}\n'
    error = only_error(validate_extension(write_ext(tmp_path, text)), "/name")
    assert (error.line, error.column) == (5, 3)


# Model errors, named by the file's own pointers.

def test_model_errors_use_camel_case_pointers_and_positions(tmp_path: Path) -> None:
    data = manifest(tools=[tool("a", "wordCount"), tool("b", "wordCount", alwaysAvailable="yes")])
    del data["displayName"]
    folder = write_ext(tmp_path, data, {"index.ts": "export function wordCount() {}\n"})
    report = validate_extension(folder)
    assert pointers(report.errors) == ["/displayName", "/tools/1/alwaysAvailable"]
    missing, wrong = report.errors
    assert missing.message == "missing required field 'displayName'"
    assert (missing.line, missing.column) == (1, 1)  # the object that lacks it
    assert wrong.message == 'expected true or false, got "yes"'
    text = (folder / "loca.json").read_text().splitlines()
    assert text[wrong.line - 1][wrong.column - 1:].startswith('"alwaysAvailable"')


def test_unknown_top_level_field(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, manifest(colour="red"))
    assert only_error(validate_extension(folder), "/colour").message == "unknown field 'colour'"


def test_capability_given_as_a_list_points_into_the_list(tmp_path: Path) -> None:
    perms = {"memories": [{"access": "admin", "reason": "r"}]}
    folder = write_ext(tmp_path, manifest(tools=[tool(permissions=perms)]),
                       {"index.ts": "export function wordCount() {}\n"})
    only_error(validate_extension(folder), "/tools/0/permissions/memories/0/access")


@pytest.mark.parametrize(("kind", "path", "says"), [
    ("read", "notes/today.md", "neither an absolute path"),
    ("write", "$desktop/out", "unknown path template '$desktop'"),
    ("read", "$env.9X", "environment variable"),
])
def test_permission_path_templates(tmp_path: Path, kind: str, path: str, says: str) -> None:
    perms = {kind: [{"path": "/ok", "reason": "r"}, {"path": path, "reason": "r"}]}
    folder = write_ext(tmp_path, manifest(tools=[tool(permissions=perms)]),
                       {"index.ts": "export function wordCount() {}\n"})
    error = only_error(validate_extension(folder), f"/tools/0/permissions/{kind}/1/path")
    assert says in error.message


def test_platform_outside_the_list(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, manifest(tools=[tool(platforms=["linux", "bsd"])]),
                       {"index.ts": "export function wordCount() {}\n"})
    only_error(validate_extension(folder), "/tools/0/platforms/1")


def test_missing_reason(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, manifest(tools=[tool(permissions={"run": [{"binary": "git"}]})]),
                       {"index.ts": "export function wordCount() {}\n"})
    error = only_error(validate_extension(folder), "/tools/0/permissions/run/0/reason")
    assert error.message == "missing required field 'reason'"


# Tool names.

def test_duplicate_tool_name_is_an_error_at_the_second(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, manifest(tools=[tool("count"), tool("other"), tool("count")]),
                       {"index.ts": "export function wordCount() {}\n"})
    error = only_error(validate_extension(folder), "/tools/2/name")
    assert "already used by /tools/0" in error.message


def test_name_that_is_not_snake_case_is_a_warning(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, manifest(tools=[tool("Word-Count")]),
                       {"index.ts": "export function wordCount() {}\n"})
    report = validate_extension(folder)
    assert report.valid and report.errors == []
    assert pointers(report.warnings) == ["/tools/0/name"]
    assert "snake_case" in report.warnings[0].message


def test_name_outside_the_format_is_an_error(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, manifest(tools=[tool("word count")]),
                       {"index.ts": "export function wordCount() {}\n"})
    assert "not a valid tool name" in only_error(validate_extension(folder), "/tools/0/name").message


# Parameters.

def with_parameters(tmp_path: Path, parameters: dict):
    folder = write_ext(tmp_path, manifest(tools=[tool(parameters=parameters)]),
                       {"index.ts": "export function wordCount() {}\n"})
    return validate_extension(folder)


def test_parameters_checked_against_the_meta_schema(tmp_path: Path) -> None:
    report = with_parameters(tmp_path, {"type": "object", "properties": {"a": {"type": 5}}})
    error = only_error(report, "/tools/0/parameters/properties/a/type")
    assert error.message.startswith("not a valid JSON Schema")


def test_parameters_pattern_must_be_a_regex(tmp_path: Path) -> None:
    report = with_parameters(tmp_path, {"type": "object",
                                        "properties": {"a": {"type": "string", "pattern": "("}}})
    only_error(report, "/tools/0/parameters/properties/a/pattern")


DRAFT4_ONLY = {"type": "object",
               "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": True}}}


def test_parameters_default_to_draft_2020_12(tmp_path: Path) -> None:
    only_error(with_parameters(tmp_path, DRAFT4_ONLY),
               "/tools/0/parameters/properties/n/exclusiveMinimum")


def test_parameters_use_their_own_dialect(tmp_path: Path) -> None:
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", **DRAFT4_ONLY}
    assert with_parameters(tmp_path / "a", draft4).valid
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
              "definitions": {"s": {"type": "string"}},
              "properties": {"s": {"$ref": "#/definitions/s"}}}
    report = with_parameters(tmp_path / "b", draft7)
    assert report.valid and report.warnings == []


def test_unknown_dialect_is_a_warning(tmp_path: Path) -> None:
    report = with_parameters(tmp_path, {"$schema": "https://example.com/dialect", "type": "object"})
    assert report.valid
    assert pointers(report.warnings) == ["/tools/0/parameters/$schema"]


def test_parameters_must_describe_an_object(tmp_path: Path) -> None:
    report = with_parameters(tmp_path, {"type": "array", "items": {"type": "string"}})
    assert '"type" must be "object"' in only_error(report, "/tools/0/parameters/type").message


def test_parameters_without_type_is_a_warning(tmp_path: Path) -> None:
    report = with_parameters(tmp_path, {"properties": {"a": {"type": "string"}}})
    assert report.valid
    assert pointers(report.warnings) == ["/tools/0/parameters"]


# The entry module and its exports.

def test_function_not_exported_by_a_typescript_entry(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, manifest(tools=[tool("a", "wordCount"), tool("b", "missing")]), {
        "index.ts": "export function wordCount() {}\n// export function missing() {}\n"
                    "function missing() {}\n",
    })
    error = only_error(validate_extension(folder), "/tools/1/function")
    assert error.message == "the entry module index.ts has no export named 'missing'"


def test_function_not_defined_by_a_python_entry(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, manifest(tools=[tool("a", "word_count"), tool("b", "gone")]),
                       {"main.py": PY_ENTRY})
    error = only_error(validate_extension(folder), "/tools/1/function")
    assert "main.py has no export named 'gone'" in error.message


def test_unfollowable_reexport_makes_a_missing_name_a_warning(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, manifest(tools=[tool()]),
                       {"index.ts": 'export * from "npm:some-package";\n'})
    report = validate_extension(folder)
    assert report.valid
    assert pointers(report.warnings) == ["/tools/0/function"]
    assert "npm:some-package" in report.warnings[0].message


def test_python_entry_that_does_not_parse(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, manifest(tools=[tool("t", "t")]), {"main.py": "def t(:\n"})
    error = only_error(validate_extension(folder), "")
    assert "main.py does not parse at line 1" in error.message


def test_tools_without_an_entry_module(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, manifest(tools=[tool()]), {"README.md": "Nothing here.\n"})
    error = only_error(validate_extension(folder), "")
    assert "index.ts, index.js, mod.ts, main.py" in error.message


def test_declared_entry_that_does_not_exist(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, manifest(entry="src/tool.ts", tools=[tool()]),
                       {"index.ts": "export function wordCount() {}\n"})
    error = only_error(validate_extension(folder), "/entry")
    assert error.message == "the entry module src/tool.ts does not exist"
    assert error.line is not None


def test_declared_entry_is_used(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, manifest(entry="src/tool.py", tools=[tool("t", "run")]),
                       {"src/tool.py": "def run(args, ctx):\n    return 1\n",
                        "index.ts": "export function other() {}\n"})
    assert validate_extension(folder).valid


def test_declared_entry_with_an_unknown_suffix(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, manifest(entry="tool.rb", tools=[tool()]), {"tool.rb": ""})
    assert "must end in one of" in only_error(validate_extension(folder), "/entry").message


def test_entry_linking_out_of_the_folder(tmp_path: Path) -> None:
    (tmp_path / "outside.ts").write_text("export function wordCount() {}\n")
    folder = write_ext(tmp_path / "ext", manifest(tools=[tool()]))
    (folder / "index.ts").symlink_to(tmp_path / "outside.ts")
    # The link is refused as install refuses it, and the entry named for where it leads.
    messages = [problem.message for problem in validate_extension(folder).errors]
    assert messages == ["index.ts: a symbolic link; links are not accepted in extensions",
                        "the entry module index.ts leads out of the extension folder"]


def test_several_default_entries_is_a_warning(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, manifest(tools=[tool()]), {
        "index.ts": "export function wordCount() {}\n", "main.py": "def other(): pass\n"})
    report = validate_extension(folder)
    assert report.valid and pointers(report.warnings) == [""]
    assert "index.ts is the entry module" in report.warnings[0].message


# Memories.

def memory_report(tmp_path: Path, memories: list[dict], files: dict[str, str] | None = None):
    folder = write_ext(tmp_path / "ext", manifest(memories=memories), files)
    return validate_extension(folder)


@pytest.mark.parametrize("path", ["/etc/passwd.md", "../outside.md", "notes/../../x.md",
                                  "C:\\notes.md", "\\notes.md"])
def test_memory_path_must_stay_inside(tmp_path: Path, path: str) -> None:
    only_error(memory_report(tmp_path, [{"kind": "knowledge", "path": path}]), "/memories/0/path")


def test_memory_symlink_out_of_the_folder(tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("secret\n")
    folder = write_ext(tmp_path / "ext", manifest(memories=[
        {"kind": "knowledge", "path": "notes.md"}]))
    (folder / "notes.md").symlink_to(tmp_path / "secret.md")
    report = validate_extension(folder)
    assert pointers(report.errors) == ["", "/memories/0/path"]
    assert report.errors[0].message == "notes.md: a symbolic link; links are not accepted in extensions"
    assert "leads out of the extension folder" in report.errors[1].message


def test_memory_that_does_not_exist(tmp_path: Path) -> None:
    report = memory_report(tmp_path, [{"kind": "knowledge", "path": "a.md"},
                                      {"kind": "skill", "path": "skills/gone"}], {"a.md": "A\n"})
    assert pointers(report.errors) == ["/memories/1/path"]
    assert report.errors[0].message == "skills/gone does not exist"


def test_knowledge_must_be_a_markdown_file(tmp_path: Path) -> None:
    report = memory_report(tmp_path, [{"kind": "knowledge", "path": "notes.txt"},
                                      {"kind": "knowledge", "path": "folder"}],
                           {"notes.txt": "x\n", "folder/a.md": "x\n"})
    assert pointers(report.errors) == ["/memories/0/path", "/memories/1/path"]
    assert ".md file" in report.errors[0].message and "not a file" in report.errors[1].message


def test_skill_must_be_a_folder_with_skill_md(tmp_path: Path) -> None:
    report = memory_report(tmp_path, [{"kind": "skill", "path": "a.md"},
                                      {"kind": "skill", "path": "empty"}],
                           {"a.md": "x\n", "empty/notes.md": "x\n"})
    assert pointers(report.errors) == ["/memories/0/path", "/memories/1/path"]
    assert "not a folder" in report.errors[0].message
    assert "has no SKILL.md" in report.errors[1].message


def test_skill_without_front_matter_is_a_warning(tmp_path: Path) -> None:
    report = memory_report(tmp_path, [{"kind": "skill", "path": "s"}],
                           {"s/SKILL.md": "---\nname: s\n---\nDo it.\n"})
    assert report.valid and pointers(report.warnings) == ["/memories/0/path"]
    assert "description" in report.warnings[0].message


def test_skill_holding_a_link_out_of_the_folder(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("secret\n")
    folder = write_ext(tmp_path / "ext", manifest(memories=[{"kind": "skill", "path": "s"}]),
                       {"s/SKILL.md": "---\nname: s\ndescription: d\n---\n"})
    os.symlink(tmp_path / "secret.txt", folder / "s" / "ref.txt")
    report = validate_extension(folder)
    assert pointers(report.errors) == ["", "/memories/0/path"]
    assert report.errors[0].message == "s/ref.txt: a symbolic link; links are not accepted in extensions"
    assert "s/ref.txt is a link leading out" in report.errors[1].message


# Keys the models ignore.

def test_unknown_nested_keys_are_warnings_with_a_suggestion(tmp_path: Path) -> None:
    perms = {"net": [{"host": "a", "ports": [1], "reason": "r", "reasons": "x"}],
             "network": [], "llm": {"reason": "r", "optinal": True}}
    folder = write_ext(tmp_path, manifest(
        tools=[tool(alwaysAvaliable=True, permissions=perms)],
        memories=[{"kind": "knowledge", "path": "a.md", "title": "A"}]),
        {"index.ts": "export function wordCount() {}\n", "a.md": "A\n"})
    report = validate_extension(folder)
    assert report.valid
    assert sorted(pointers(report.warnings)) == sorted([
        "/tools/0/alwaysAvaliable", "/tools/0/permissions/network",
        "/tools/0/permissions/net/0/reasons", "/tools/0/permissions/llm/optinal",
        "/memories/0/title"])
    by_pointer = {w.pointer: w.message for w in report.warnings}
    assert by_pointer["/tools/0/alwaysAvaliable"].endswith("did you mean 'alwaysAvailable'?")


# The report.

def test_report_json_shape(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, manifest(tools=[tool("Count")]))
    data = validate_extension(folder).to_json()
    assert set(data) == {"valid", "errors", "warnings"}
    assert data["valid"] is False
    assert data["errors"] == [{"pointer": "", "message": data["errors"][0]["message"]}]
    assert data["warnings"][0]["pointer"] == "/tools/0/name"
    assert set(data["warnings"][0]) == {"pointer", "message", "line", "column"}
    json.dumps(data)


def test_problems_are_in_file_order(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, manifest(
        tools=[tool("a", "x", parameters={"type": "array"}), tool("a", "y")],
        memories=[{"kind": "knowledge", "path": "gone.md"}]),
        {"index.ts": "export function x() {}\nexport function y() {}\n"})
    report = validate_extension(folder)
    assert pointers(report.errors) == ["/tools/0/parameters/type", "/tools/1/name",
                                       "/memories/0/path"]
    lines = [p.line for p in report.errors]
    assert lines == sorted(lines)


def test_load_manifest(ts_ext: Path, tmp_path: Path) -> None:
    assert load_manifest(ts_ext).name == "loca-extension-test"
    broken = write_ext(tmp_path / "broken", manifest(tools=[tool("a b")]),
                       {"index.ts": "export function wordCount() {}\n"})
    with pytest.raises(ManifestError) as caught:
        load_manifest(broken)
    assert caught.value.where.endswith("/tools/0/name")
    assert "loca.json:" in caught.value.where


# Odd documents are reported, never raised.

def test_values_of_the_wrong_type_are_reported_where_they_are(tmp_path: Path) -> None:
    odd = manifest(entry=5, tools=[
        "x", None,
        {"name": "t", "description": "d", "parameters": "str", "function": 7, "permissions": []},
        tool("u", "f", permissions={"net": "x", "read": [None], "memories": 5, "llm": [7]}),
    ], memories={"kind": "skill"})
    report = validate_extension(write_ext(tmp_path, odd))
    assert pointers(report.errors) == [
        "/entry", "/tools/0", "/tools/1", "/tools/2/parameters", "/tools/2/function",
        "/tools/2/permissions", "/tools/3/permissions/net", "/tools/3/permissions/read/0",
        "/tools/3/permissions/memories", "/tools/3/permissions/llm/0", "/memories",
    ]
    assert all(problem.line is not None for problem in report.errors)


def test_deeply_nested_documents_are_reported(tmp_path: Path) -> None:
    folder = write_ext(tmp_path / "a", '{"name": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert "nested too deeply" in only_error(validate_extension(folder), "").message
    nested = '{"type": "object", "properties": {"a": ' * 400 + "{}" + "}}" * 400
    text = json.dumps(manifest(tools=[tool(parameters="PARAMETERS")]))
    folder = write_ext(tmp_path / "b", text.replace('"PARAMETERS"', nested),
                       {"index.ts": "export function wordCount() {}\n"})
    report = validate_extension(folder)
    error = only_error(report, "/tools/0/parameters")
    assert error.message == "the schema nests too deeply to check"


def test_git_and_node_modules_do_not_count_towards_the_folder_cap(tmp_path: Path) -> None:
    folder = write_ext(tmp_path, manifest(), {".git/objects/pack": "x" * 5000,
                                              "node_modules/dep/index.js": "x" * 5000})
    assert validate_extension(folder, max_folder_bytes=4096).valid
