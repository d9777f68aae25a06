"""An installed extension whose files change while the host runs — and is held at once.

The person installed (and so approved) an extension; mid-session its code is
replaced (by another process, or by one of its own tools granted write on its
folder). The very next call must not run the new code: it is refused, naming the
changed file, the extension is held with the same state and message a start of the
host gives, and the host stays healthy. A worker started ahead before the change
does not run it either. Python and Deno alike.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from workbench.core.host import Host
from workbench.events import PermissionAnswer

pytestmark = pytest.mark.security

PY = "def hello(args, ctx):\n    return 'approved code'\n"
PY_EVIL = "def hello(args, ctx):\n    return 'replaced code'\n"
TS = "export function hello() { return 'approved code'; }\n"
TS_EVIL = "export function hello() { return 'replaced code'; }\n"


class Person:
    async def answer(self, request):
        return PermissionAnswer("always")


def source(tmp_path: Path, runtime: str) -> Path:
    folder = tmp_path / "source" / "changer"
    folder.mkdir(parents=True)
    entry = "main.py" if runtime == "python" else "index.ts"
    (folder / entry).write_text(PY if runtime == "python" else TS)
    (folder / "loca.json").write_text(json.dumps({
        "name": "changer", "displayName": "Changer", "description": "Says hello.",
        "entry": entry,
        "tools": [{"name": "hello", "description": "Say hello.", "function": "hello",
                   "parameters": {"type": "object"}}]}))
    return folder


@pytest.mark.parametrize("runtime", ["python", "deno"])
async def test_code_replaced_mid_session_is_held_at_the_next_call(tmp_path, runtime):
    async with Host.open(cwd=tmp_path) as host:
        host.answer_with(Person())
        host.extensions.install(str(source(tmp_path, runtime)), lambda plan: True)
        first = await host.tools.call("hello", {})
        assert first.ok and first.result == "approved code", first.error
        entry = host.home.extensions_dir / "changer" / ("main.py" if runtime == "python"
                                                         else "index.ts")
        # A worker for the next call is waiting already; then the code is replaced,
        # keeping its size and its modification time.
        stat = entry.stat()
        entry.write_text(PY_EVIL if runtime == "python" else TS_EVIL)
        os.utime(entry, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        outcome = await host.tools.call("hello", {})
        assert not outcome.ok, outcome.result
        assert entry.name in outcome.error["message"], outcome.error
        assert "held" in outcome.error["message"] and "ext trust changer" in outcome.error["message"]
        # Held as a start would hold it: the same state and message.
        report = host.tools.status_report().to_json()
        problems = [p for p in report["load_errors"] if p["extension"] == "changer"]
        assert problems and problems[0]["state"] == "held", report["load_errors"]
        at_start = host.extensions.manager().get("changer")
        assert problems[0]["error_message"] == at_start.reason
        again = await host.tools.call("hello", {})
        assert not again.ok and "replaced code" not in json.dumps(again.to_json())
        healthy = await host.tools.call("word_count", {"text": "still here"})
        assert healthy.ok and healthy.result["words"] == 2


async def test_an_added_file_holds_it_and_an_unchanged_one_runs(tmp_path):
    async with Host.open(cwd=tmp_path) as host:
        host.extensions.install(str(source(tmp_path, "python")), lambda plan: True)
        for _ in range(3):
            outcome = await host.tools.call("hello", {})
            assert outcome.ok and outcome.result == "approved code", outcome.error
        planted = host.home.extensions_dir / "changer" / "sitecustomize.py"
        planted.write_text("import os\n")
        outcome = await host.tools.call("hello", {})
        assert not outcome.ok and "sitecustomize.py" in outcome.error["message"], outcome.error
