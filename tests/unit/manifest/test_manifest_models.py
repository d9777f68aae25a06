"""The loca.json models: fields, aliases, defaults, and the rules they enforce."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from pydantic import ValidationError

from workbench.errors import ManifestError
from workbench.manifest.models import (
    Manifest,
    Memory,
    Permissions,
    Tool,
)
from workbench.manifest.paths import check_permission_path, check_relative_path, runtime_for

WORDCOUNT = {
    "$schema": "https://get.loca.rzkyif.com/schemas/loca-v1.json",
    "name": "loca-extension-wordcount",
    "displayName": "Word Count",
    "description": "Count the words and characters in a piece of text.",
    "tools": [
        {
            "name": "word_count",
            "description": "Count the words. Use when the user asks how long something is.",
            "parameters": {
                "type": "object",
                "properties": {"text": {"type": "string", "description": "The text."}},
                "required": ["text"],
            },
            "triggers": ["how many words is this"],
            "function": "wordCount",
        }
    ],
}


def tool(**fields) -> dict:
    base = {"name": "t", "description": "A tool.", "parameters": {"type": "object"},
            "function": "t"}
    base.update(fields)
    return base


def manifest(**fields) -> dict:
    base = {"name": "x", "displayName": "X", "description": "An extension."}
    base.update(fields)
    return base


def error_locs(data: dict) -> list[tuple]:
    with pytest.raises(ValidationError) as caught:
        Manifest.model_validate(data)
    return [tuple(error["loc"]) for error in caught.value.errors()]


def test_seed_wordcount_manifest_parses() -> None:
    parsed = Manifest.model_validate(WORDCOUNT)
    assert parsed.schema_url == WORDCOUNT["$schema"]
    assert parsed.display_name == "Word Count"
    assert parsed.tools[0].function == "wordCount"
    assert parsed.tools[0].triggers == ["how many words is this"]


def test_defaults() -> None:
    parsed = Manifest.model_validate(manifest())
    assert parsed.database is False
    assert parsed.tools == [] and parsed.memories == []
    assert parsed.entry is None and parsed.license is None and parsed.homepage is None
    only = Tool.model_validate(tool())
    assert only.always_available is False
    assert only.platforms == [] and only.triggers == []
    assert only.permissions.is_empty()
    assert only.timeout_ms is None


def test_python_names_are_accepted_and_aliases_are_dumped() -> None:
    parsed = Manifest(name="x", display_name="X", description="d",
                      tools=[Tool(name="t", description="d", parameters={}, function="f",
                                  always_available=True, timeout_ms=5000)])
    dumped = parsed.model_dump(by_alias=True, exclude_none=True)
    assert dumped["displayName"] == "X"
    assert dumped["tools"][0]["alwaysAvailable"] is True
    assert dumped["tools"][0]["timeoutMs"] == 5000


@pytest.mark.parametrize("missing", ["name", "displayName", "description"])
def test_required_top_level_fields(missing: str) -> None:
    data = manifest()
    del data[missing]
    assert error_locs(data) == [(missing,)]


@pytest.mark.parametrize("missing", ["name", "description", "parameters", "function"])
def test_required_tool_fields(missing: str) -> None:
    entry = tool()
    del entry[missing]
    assert error_locs(manifest(tools=[entry])) == [("tools", 0, missing)]


def test_unknown_top_level_key_is_refused_but_unknown_tool_key_is_ignored() -> None:
    assert error_locs(manifest(colour="red")) == [("colour",)]
    parsed = Manifest.model_validate(manifest(tools=[tool(trigers=["x"])]))
    assert parsed.tools[0].triggers == []


def test_values_are_checked_strictly() -> None:
    assert error_locs(manifest(database="true")) == [("database",)]
    assert error_locs(manifest(tools=[tool(timeoutMs="5")])) == [("tools", 0, "timeoutMs")]
    assert error_locs(manifest(tools=[tool(alwaysAvailable=1)])) == [("tools", 0, "alwaysAvailable")]


@pytest.mark.parametrize("name", ["word_count", "Word-Count_2", "a", "x" * 64])
def test_tool_names_matching_the_format_are_accepted(name: str) -> None:
    assert Tool.model_validate(tool(name=name)).name == name


@pytest.mark.parametrize("name", ["", "word count", "x" * 65, "naïve", "a.b", "a\n"])
def test_tool_names_outside_the_format_are_refused(name: str) -> None:
    assert error_locs(manifest(tools=[tool(name=name)])) == [("tools", 0, "name")]


@pytest.mark.parametrize("function", ["", "2fast", "word count", "a.b"])
def test_function_must_be_an_identifier(function: str) -> None:
    assert error_locs(manifest(tools=[tool(function=function)])) == [("tools", 0, "function")]


@pytest.mark.parametrize("value", [0, -1, 1.5, True])
def test_timeout_must_be_a_positive_integer(value) -> None:
    assert error_locs(manifest(tools=[tool(timeoutMs=value)])) == [("tools", 0, "timeoutMs")]


def test_timeout_is_read_from_timeout_ms() -> None:
    assert Tool.model_validate(tool(timeoutMs=1500)).timeout_ms == 1500


def test_platforms() -> None:
    assert error_locs(manifest(tools=[tool(platforms=["linux", "macos"])])) == [
        ("tools", 0, "platforms", 1)]
    assert Tool.model_validate(tool(platforms=["linux_wayland", "darwin"])).platforms == [
        "linux_wayland", "darwin"]


FULL_PERMISSIONS = {
    "net": [{"host": "*", "ports": [80, 443], "reason": "Fetch pages."},
            {"host": "example.com", "ports": [8443], "reason": "API.", "optional": True}],
    "read": [{"path": "/", "reason": "Read anything."}, {"path": "$home", "reason": "Home."}],
    "write": [{"path": "$downloads", "reason": "Save the file."}],
    "run": [{"binary": "git", "reason": "Read the history."}],
    "env": [{"key": "HOME", "reason": "Find the home folder."}],
    "ffi": [{"reason": "Load the codec."}],
    "sys": [{"flag": "hostname", "reason": "Name the machine."}],
    "memories": {"access": "write", "reason": "Save notes."},
    "llm": {"reason": "Summarize."},
    "tts": [{"reason": "Read aloud."}],
    "stt": {"reason": "Transcribe.", "optional": True},
}


def test_every_permission_kind_parses() -> None:
    perms = Permissions.model_validate(FULL_PERMISSIONS)
    assert [entry.host for entry in perms.net] == ["*", "example.com"]
    assert perms.net[1].optional is True and perms.net[0].optional is False
    assert perms.read[1].path == "$home" and perms.write[0].path == "$downloads"
    assert perms.run[0].binary == "git" and perms.env[0].key == "HOME"
    assert perms.ffi[0].reason == "Load the codec." and perms.sys[0].flag == "hostname"
    assert [entry.access for entry in perms.memories] == ["write"]  # one object: a list of one
    assert perms.llm[0].reason == "Summarize."
    assert perms.tts[0].reason == "Read aloud."
    assert perms.stt[0].optional is True
    assert not perms.is_empty()


def test_a_capability_may_list_several_entries() -> None:
    perms = Permissions.model_validate({
        "memories": [{"access": "read", "reason": "Look up the notes."},
                     {"access": "write", "reason": "Save a new note.", "optional": True}],
        "llm": [{"reason": "a"}, {"reason": "b"}]})
    assert [(entry.access, entry.optional) for entry in perms.memories] == [
        ("read", False), ("write", True)]
    assert [entry.reason for entry in perms.llm] == ["a", "b"]


@pytest.mark.parametrize(("kind", "entry", "loc"), [
    ("net", [{"host": "a", "ports": [0], "reason": "r"}], ("net", 0, "ports", "list", 0)),
    ("net", [{"host": "a", "ports": [65536], "reason": "r"}], ("net", 0, "ports", "list", 0)),
    ("net", [{"host": "a", "ports": [], "reason": "r"}], ("net", 0, "ports", "list")),
    ("net", [{"host": "a", "ports": "any", "reason": "r"}], ("net", 0, "ports", "any")),
    ("env", [{"key": "MY-KEY", "reason": "r"}], ("env", 0, "key")),
    ("env", [{"key": "1KEY", "reason": "r"}], ("env", 0, "key")),
    ("net", [{"host": "a", "reason": "r"}], ("net", 0, "ports")),
    ("read", [{"path": "/x"}], ("read", 0, "reason")),
    ("write", [{"path": "/x", "reason": ""}], ("write", 0, "reason")),
    ("run", [{"binary": "git", "reason": "   "}], ("run", 0, "reason")),
    ("env", [{"reason": "r"}], ("env", 0, "key")),
    ("sys", [{"reason": "r"}], ("sys", 0, "flag")),
    ("ffi", [{}], ("ffi", 0, "reason")),
    ("memories", {"access": "admin", "reason": "r"}, ("memories", 0, "access")),
    ("memories", [{"access": "read", "reason": "r"}, {"reason": "r"}], ("memories", 1, "access")),
    ("llm", {}, ("llm", 0, "reason")),
    ("stt", "yes", ("stt",)),
])
def test_bad_permission_entries(kind: str, entry, loc: tuple) -> None:
    with pytest.raises(ValidationError) as caught:
        Permissions.model_validate({kind: entry})
    assert [error["loc"] for error in caught.value.errors()] == [loc]


@pytest.mark.parametrize("path", [
    "/", "/etc/hosts", "$home", "$home/notes", "$downloads", "$models/llama", "$sessions",
    "$extension/data", "$env.XDG_DATA_HOME", "$env._X1/sub/dir", "C:\\Users", "d:/data",
    "\\\\server\\share",
])
def test_permission_paths_accepted(path: str) -> None:
    assert check_permission_path(path) == path


@pytest.mark.parametrize(("path", "says"), [
    ("notes/today.md", "neither an absolute path"),
    ("~/notes", "neither an absolute path"),
    ("", "empty"),
    ("$desktop", "unknown path template '$desktop'"),
    ("$homework/x", "unknown path template '$homework'"),
    ("$HOME", "unknown path template"),
    ("$env.1ABC", "must name an environment variable"),
    ("$env.", "must name an environment variable"),
    ("$home/../etc", "'..' segment"),
    ("/srv/../etc", "'..' segment"),
])
def test_permission_paths_refused(path: str, says: str) -> None:
    with pytest.raises(ValueError) as caught:
        check_permission_path(path)
    assert says in str(caught.value)


def test_permission_path_rule_applies_in_the_model() -> None:
    with pytest.raises(ValidationError) as caught:
        Permissions.model_validate({"read": [{"path": "$desktop", "reason": "r"}]})
    error = caught.value.errors()[0]
    assert error["loc"] == ("read", 0, "path")
    assert "unknown path template" in error["msg"]


@pytest.mark.parametrize("path", ["memories/overview.md", "skill", "a/..b/c..", "./x.md", "m\\n.md"])
def test_relative_paths_accepted(path: str) -> None:
    assert check_relative_path(path) == path
    assert Memory.model_validate({"kind": "knowledge", "path": path}).path == path


@pytest.mark.parametrize("path", ["", "/abs.md", "\\abs.md", "C:\\x.md", "c:x.md", "..",
                                  "../x.md", "a/../b.md", "a\\..\\b.md", "a/.."])
def test_relative_paths_refused(path: str) -> None:
    with pytest.raises(ValueError):
        check_relative_path(path)
    with pytest.raises(ValidationError):
        Memory.model_validate({"kind": "knowledge", "path": path})


def test_memory_kind_is_knowledge_or_skill() -> None:
    assert error_locs(manifest(memories=[{"kind": "recipe", "path": "a.md"}])) == [
        ("memories", 0, "kind")]


@pytest.mark.parametrize(("name", "runtime"), [
    ("index.ts", "deno"), ("a/b.js", "deno"), ("x.mts", "deno"), ("x.mjs", "deno"),
    ("x.tsx", "deno"), ("x.jsx", "deno"), ("main.py", "python"), ("x.rb", None), ("x", None),
])
def test_runtime_follows_the_suffix(name: str, runtime) -> None:
    assert runtime_for(name) == runtime


def test_entry_must_be_relative_with_a_known_suffix() -> None:
    assert Manifest.model_validate(manifest(entry="src/tool.py")).entry == "src/tool.py"
    assert error_locs(manifest(entry="tool.rb")) == [("entry",)]
    assert error_locs(manifest(entry="../tool.ts")) == [("entry",)]
    assert error_locs(manifest(entry="/abs/tool.ts")) == [("entry",)]


@pytest.mark.parametrize(("files", "expected", "runtime"), [
    (["main.py", "mod.ts", "index.js", "index.ts"], "index.ts", "deno"),
    (["main.py", "mod.ts", "index.js"], "index.js", "deno"),
    (["main.py", "mod.ts"], "mod.ts", "deno"),
    (["main.py"], "main.py", "python"),
])
def test_resolve_entry_looks_in_order(tmp_path: Path, files: list[str], expected: str,
                                      runtime: str) -> None:
    for name in files:
        (tmp_path / name).write_text("")
    parsed = Manifest.model_validate(manifest())
    found = parsed.resolve_entry(tmp_path)
    assert found.path == (tmp_path / expected).resolve()
    assert found.runtime == runtime
    assert parsed.runtime(tmp_path) == runtime


def test_resolve_entry_uses_the_declared_entry(tmp_path: Path) -> None:
    (tmp_path / "index.ts").write_text("")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "tool.py").write_text("")
    parsed = Manifest.model_validate(manifest(entry="src/tool.py"))
    assert parsed.resolve_entry(tmp_path).path == (tmp_path / "src" / "tool.py").resolve()
    assert parsed.runtime(tmp_path) == "python"


def test_resolve_entry_without_a_module_raises(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="index.ts, index.js, mod.ts, main.py"):
        Manifest.model_validate(manifest()).resolve_entry(tmp_path)
    with pytest.raises(ManifestError, match="src/gone.ts"):
        Manifest.model_validate(manifest(entry="src/gone.ts")).runtime(tmp_path)


def test_resolve_entry_ignores_a_link_out_of_the_folder(tmp_path: Path) -> None:
    outside = tmp_path / "outside.ts"
    outside.write_text("export function f() {}\n")
    folder = tmp_path / "ext"
    folder.mkdir()
    (folder / "index.ts").symlink_to(outside)
    with pytest.raises(ManifestError):
        Manifest.model_validate(manifest()).resolve_entry(folder)


def test_tool_lookup_by_name() -> None:
    parsed = Manifest.model_validate(WORDCOUNT)
    assert parsed.tool("word_count") is parsed.tools[0]
    assert parsed.tool("nope") is None


def test_models_are_frozen() -> None:
    parsed = Manifest.model_validate(copy.deepcopy(WORDCOUNT))
    with pytest.raises(ValidationError):
        parsed.name = "other"


def test_resolved_entry_unpacks_as_path_and_runtime(tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text("")
    path, runtime = Manifest.model_validate(manifest()).resolve_entry(tmp_path)
    assert (path, runtime) == ((tmp_path / "main.py").resolve(), "python")
