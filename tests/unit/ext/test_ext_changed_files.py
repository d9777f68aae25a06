"""Telling cheaply which files of an extension differ from the approved ones."""

from __future__ import annotations

import os
from pathlib import Path

from workbench.ext.consent import changed_since_approved
from workbench.ext.fingerprint import fingerprint


def approved(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    folder = tmp_path / "ext"
    (folder / "lib").mkdir(parents=True)
    (folder / "main.py").write_text("def hello(args, ctx):\n    return 1\n")
    (folder / "lib" / "util.py").write_text("X = 1\n")
    (folder / "loca.json").write_text("{}")
    return folder, fingerprint(folder).by_path()


def test_nothing_changed_hashes_once_then_only_stats(tmp_path, monkeypatch):
    folder, recorded = approved(tmp_path)
    seen: dict = {}
    assert changed_since_approved(folder, recorded, seen) == []
    assert set(seen) == set(recorded)
    import workbench.ext.consent as consent

    monkeypatch.setattr(consent, "file_digest", lambda *a: (_ for _ in ()).throw(AssertionError))
    assert changed_since_approved(folder, recorded, seen) == []


def test_a_rewrite_with_the_same_size_and_mtime_is_found(tmp_path):
    folder, recorded = approved(tmp_path)
    seen: dict = {}
    changed_since_approved(folder, recorded, seen)
    entry = folder / "main.py"
    before = entry.stat()
    entry.write_text("def hello(args, ctx):\n    return 2\n")
    os.utime(entry, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert entry.stat().st_size == before.st_size
    assert changed_since_approved(folder, recorded, seen) == ["main.py"]


def test_added_missing_and_linked_files_are_named_and_runtime_files_are_not(tmp_path):
    folder, recorded = approved(tmp_path)
    seen: dict = {}
    (folder / "lib" / "util.py").unlink()
    (folder / "lib" / "util.py").symlink_to("/etc/passwd")
    (folder / "extra.py").write_text("")
    (folder / "loca.json").unlink()
    (folder / "data.db").write_text("runtime")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "main.pyc").write_text("runtime")
    assert changed_since_approved(folder, recorded, seen) == ["extra.py", "lib/util.py", "loca.json"]
