"""Finding an entry module's exports statically, in TypeScript, JavaScript and Python."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.manifest.exports import MAX_DEPTH, blank_comments, scan_exports


def scan(tmp_path: Path, files: dict[str, str], entry: str = "index.ts"):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return scan_exports(tmp_path / entry, tmp_path)


TS = """\
export async function asyncFn(args, ctx) {}
export function plainFn() {}
export function* generatorFn() {}
  export const arrow = async (args) => args;
export let counter = 0;
export var legacy = 1;
export class Runner {}
export const { fromObject, renamed: alias } = helpers;
const a = 1, b = 2, c = 3;
export { a, b as bee };
export {
  c as sea,
  type Hidden,
};
export { shout, whisper as quiet } from "./voice.ts";
export * as tools from "./tools.ts";
export default function defaultOnly() {}
export type Args = { text: string };
export interface Ctx {}
export declare function declaredOnly(): void;
export type { TypeOnly } from "./types.ts";
"""


def test_typescript_export_forms(tmp_path: Path) -> None:
    result = scan(tmp_path, {"index.ts": TS})
    assert result.complete
    assert {"asyncFn", "plainFn", "generatorFn", "arrow", "counter", "legacy", "Runner",
            "fromObject", "alias", "a", "bee", "sea", "shout", "quiet", "tools"} <= result.names
    for absent in ("defaultOnly", "Args", "Ctx", "declaredOnly", "TypeOnly", "Hidden",
                   "b", "c", "whisper", "renamed", "helpers"):
        assert absent not in result.names


def test_commented_out_exports_do_not_count(tmp_path: Path) -> None:
    source = ("// export function lineComment() {}\n"
              "/* export function blockComment() {}\n"
              "   export const alsoInBlock = 1; */\n"
              "const url = \"https://example.com/*\";\n"
              "export function afterString() {}\n"
              "const glob = '*/';\n"
              "export function afterGlob() {}\n")
    result = scan(tmp_path, {"index.ts": source})
    assert result.names == {"afterString", "afterGlob"}


def test_blank_comments_keeps_lines_and_strings() -> None:
    source = 'a // one\n/* two\nthree */ b "//not" `/* nor */`\n'
    blanked = blank_comments(source)
    assert blanked.count("\n") == source.count("\n")
    assert len(blanked) == len(source)
    assert "one" not in blanked and "two" not in blanked and "three" not in blanked
    assert '"//not"' in blanked and "`/* nor */`" in blanked


def test_star_reexports_are_followed(tmp_path: Path) -> None:
    result = scan(tmp_path, {
        "index.ts": 'export * from "./lib/a.ts";\n',
        "lib/a.ts": "export function fromA() {}\nexport * from '../shared/b.js';\n",
        "shared/b.js": "export const fromB = () => 1;\n",
    })
    assert result.complete and result.names == {"fromA", "fromB"}


def test_cyclic_reexports_terminate(tmp_path: Path) -> None:
    result = scan(tmp_path, {
        "index.ts": 'export * from "./a.ts";\nexport function root() {}\n',
        "a.ts": 'export * from "./index.ts";\nexport function inA() {}\n',
    })
    assert result.complete and result.names == {"root", "inA"}


@pytest.mark.parametrize(("specifier", "says"), [
    ("npm:lodash", "not a file in the extension"),
    ("jsr:@std/path", "not a file in the extension"),
    ("./missing.ts", "does not exist"),
    ("../outside.ts", "outside the extension"),
])
def test_unfollowable_reexports_make_the_scan_incomplete(tmp_path: Path, specifier: str,
                                                         says: str) -> None:
    (tmp_path / "outside.ts").write_text("export function out() {}\n")
    root = tmp_path / "ext"
    root.mkdir()
    (root / "index.ts").write_text(f'export * from "{specifier}";\n')
    result = scan_exports(root / "index.ts", root)
    assert not result.complete
    assert says in result.unresolved[0]
    assert "out" not in result.names


def test_reexport_depth_is_capped(tmp_path: Path) -> None:
    files = {f"m{i}.ts": f'export * from "./m{i + 1}.ts";\n' for i in range(MAX_DEPTH + 2)}
    files[f"m{MAX_DEPTH + 2}.ts"] = "export function deep() {}\n"
    result = scan(tmp_path, files, entry="m0.ts")
    assert not result.complete
    assert "levels of re-exports" in result.unresolved[0]


PY = """\
import os
import json as j
import xml.etree.ElementTree
from pathlib import Path, PurePath as PP

async def async_tool(args, ctx):
    def nested():
        pass
    return 1

def tool(args, ctx):
    inner = 1

class Callable:
    pass

value = other = 1
first, (second, third) = 1, (2, 3)
annotated: int = 5
declared_only: int
counter += 1

if os.name == "nt":
    def windows_only(args, ctx):
        pass
else:
    posix_only = lambda args, ctx: None

try:
    import tomllib
except ImportError:
    tomllib = None
"""


def test_python_top_level_names(tmp_path: Path) -> None:
    result = scan(tmp_path, {"main.py": PY}, entry="main.py")
    assert result.complete
    assert {"os", "j", "xml", "Path", "PP", "async_tool", "tool", "Callable", "value", "other",
            "first", "second", "third", "annotated", "counter", "windows_only", "posix_only",
            "tomllib"} <= result.names
    for absent in ("nested", "inner", "declared_only", "json", "PurePath"):
        assert absent not in result.names


def test_python_star_import_and_getattr_make_the_scan_incomplete(tmp_path: Path) -> None:
    result = scan(tmp_path, {"main.py": "from helpers import *\n"}, entry="main.py")
    assert not result.complete and "import *" in result.unresolved[0]
    dynamic = scan(tmp_path, {"main.py": "def __getattr__(name):\n    return len\n"},
                   entry="main.py")
    assert not dynamic.complete and "__getattr__" in dynamic.unresolved[0]


def test_python_syntax_error(tmp_path: Path) -> None:
    result = scan(tmp_path, {"main.py": "x = 1\ndef broken(:\n"}, entry="main.py")
    assert not result.complete
    assert result.error.startswith("main.py does not parse at line 2")
