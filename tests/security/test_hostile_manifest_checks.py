"""The manifest checks kept in the store are never trusted beyond what they were made for.

A start skips a manifest's parameter check only for a text whose row's seal the home's
key makes (``workbench/ext/manifest_checks.py``). Here the row is edited, forged for
another text, the manifest is changed on disk after its row was made, and the key is
taken away or swapped for a link: each time the manifest is checked in full, and an
invalid one never reaches the registry.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from extension_folders import write_extension
from workbench.config.home import Home
from workbench.ext.manager import ExtensionManager
from workbench.ext.manifest_checks import CHECKS_VERSION, KEY_NAME
from workbench.store import Store

NAME = "loca-extension-foo"
BAD_SCHEMA = {"type": "object", "properties": {"n": {"type": "integer", "minimum": "five"}}}
"""Parameters the models accept but that are no JSON Schema: only the parameter check
(the one a valid row skips) finds it."""


@pytest.fixture
def store(home: Home) -> Iterator[Store]:
    with Store.open(home.db_path) as opened:
        yield opened


def _manager(home: Home, store: Store) -> ExtensionManager:
    return ExtensionManager(home, store, registry_url="http://127.0.0.1:9")


@pytest.fixture
def installed(home: Home, store: Store, tmp_path: Path) -> Path:
    """``NAME`` installed and approved; returns its installed folder."""
    source = write_extension(tmp_path / "src" / "foo", NAME, ["foo"], version="1.0.0")
    _manager(home, store).install(str(source), approve=lambda plan: True)
    return home.extensions_dir / NAME


def _manifest_sha(folder: Path) -> str:
    return hashlib.sha256((folder / "loca.json").read_bytes()).hexdigest()


def _rows(store: Store) -> dict[str, str]:
    return {row["text_sha256"]: row["seal"] for row in store._all(
        "SELECT text_sha256, seal FROM manifest_checks")}


def _break_parameters(folder: Path) -> None:
    data = json.loads((folder / "loca.json").read_text())
    data["tools"][0]["parameters"] = BAD_SCHEMA
    (folder / "loca.json").write_text(json.dumps(data, indent=2))


def _state(home: Home, store: Store) -> tuple[str, str]:
    found = _manager(home, store).get(NAME)
    return found.state, found.reason


def test_an_install_records_its_text_and_a_start_skips_jsonschema(home: Home, store: Store,
                                                                  installed: Path) -> None:
    assert list(_rows(store)) == [_manifest_sha(installed)]
    key = home.root / KEY_NAME
    assert key.stat().st_size == 32 and key.stat().st_mode & 0o077 == 0
    # A fresh interpreter listing the installed extensions imports no jsonschema.
    code = ("import sys\nfrom workbench.config.home import Home\nfrom workbench.store import Store\n"
            "from workbench.ext.manager import ExtensionManager\n"
            "home = Home.resolve().ensure()\n"
            "with Store.open(home.db_path) as store:\n"
            "    found = ExtensionManager(home, store).get(sys.argv[1])\n"
            "print(found.state, 'jsonschema' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code, NAME], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ), check=True)
    assert done.stdout.split() == ["ok", "False"]


def test_a_manifest_changed_on_disk_after_its_row_is_checked_again(home: Home, store: Store,
                                                                   installed: Path) -> None:
    _break_parameters(installed)
    state, reason = _state(home, store)
    assert state == "broken"
    assert "/tools/0/parameters/properties/n/minimum" in reason and "not a valid JSON Schema" in reason
    assert _manifest_sha(installed) not in _rows(store)


def test_a_row_forged_for_the_changed_text_is_not_trusted(home: Home, store: Store,
                                                          installed: Path) -> None:
    [(sha, seal)] = _rows(store).items()
    _break_parameters(installed)
    forged = _manifest_sha(installed)
    # The old row moved to the new text, with its seal, and a made-up seal beside it.
    store._execute("UPDATE manifest_checks SET text_sha256 = ? WHERE text_sha256 = ?", (forged, sha))
    assert _state(home, store)[0] == "broken"
    store._execute("UPDATE manifest_checks SET seal = ? WHERE text_sha256 = ?",
                   (hashlib.sha256(forged.encode()).hexdigest(), forged))
    assert _state(home, store)[0] == "broken"
    assert _rows(store)[forged] != seal


def test_a_damaged_row_is_checked_again_and_made_good(home: Home, store: Store,
                                                      installed: Path) -> None:
    [(sha, seal)] = _rows(store).items()
    store._execute("UPDATE manifest_checks SET seal = 'damaged' WHERE text_sha256 = ?", (sha,))
    assert _state(home, store) == ("ok", "")
    assert _rows(store) == {sha: seal}


@pytest.mark.parametrize("key", ["missing", "link", "short"])
def test_without_its_own_key_every_text_is_checked_in_full(home: Home, store: Store, installed: Path,
                                                           tmp_path: Path, key: str) -> None:
    path = home.root / KEY_NAME
    original = path.read_bytes()
    path.unlink()
    if key == "link":
        # A key the attacker knows, planted as a link: never followed.
        planted = tmp_path / "planted.key"
        planted.write_bytes(original)
        path.symlink_to(planted)
    elif key == "short":
        path.write_bytes(original[:16])
    _break_parameters(installed)
    # A seal made with the old key for the broken text, as one who read it could.
    forged = _manifest_sha(installed)
    seal = hmac.new(original, f"{CHECKS_VERSION}\0{forged}".encode(), hashlib.sha256).hexdigest()
    store.record_manifest_check(forged, seal)
    state, _reason = _state(home, store)
    if key == "missing":
        # A new key is made: the old seal is not its seal.
        assert path.read_bytes() != original
    assert state == "broken"


def test_a_call_refuses_a_changed_manifest_that_a_forged_store_vouches_for(home: Home, store: Store,
                                                                            installed: Path) -> None:
    """``workbench call`` (read without typer, as scripts run it) after someone who can
    write the store but not read the key changed the manifest on disk: the files and the
    consent on record made to match it, and a row with a made-up seal for its text. Only
    the seal is left to catch it, and it does: the text is checked in full, and the
    tool is never run."""
    from commands import workbench

    from workbench.ext.fingerprint import fingerprint

    done = workbench("call", "foo", "--json", process=True)
    assert json.loads(done.stdout) == {"ok": True, "result": {"from": NAME, "tool": "foo"}}
    _break_parameters(installed)
    prints = fingerprint(installed)
    consent = store.get_consent(NAME)
    assert consent is not None
    store.set_extension_files(NAME, ((f.path, f.sha256, f.size) for f in prints.files))
    store.record_consent(NAME, prints.digest, consent["approved"])
    forged = _manifest_sha(installed)
    store.record_manifest_check(forged, hashlib.sha256(forged.encode()).hexdigest())
    done = workbench("call", "foo", "--json", process=True)
    assert done.returncode != 0
    assert json.loads(done.stdout)["ok"] is False
    assert _state(home, store)[0] == "broken"
    assert "not a valid JSON Schema" in _state(home, store)[1]
    # The control: the seal the home's key makes for that text is all that was missing
    # (nothing else of the store refused the call).
    key = (home.root / KEY_NAME).read_bytes()
    store.record_manifest_check(forged, hmac.new(key, f"{CHECKS_VERSION}\0{forged}".encode(),
                                                 hashlib.sha256).hexdigest())
    done = workbench("call", "foo", "--json", process=True)
    assert json.loads(done.stdout) == {"ok": True, "result": {"from": NAME, "tool": "foo"}}


def test_a_project_extension_uses_the_checks_and_a_forged_row_never_passes_it(
        home: Home, store: Store, tmp_path: Path) -> None:
    """A project's own extension (found, never installed) is checked against the same
    sealed rows: once its text passed, a fresh interpreter finds it without jsonschema;
    a project can plant a row for a broken text, never its seal."""
    from workbench.ext.discovery import PROJECT_EXTENSIONS

    project = tmp_path / "project"
    folder = write_extension(project / PROJECT_EXTENSIONS / "bar", "loca-extension-bar", ["bar"])
    [found] = _manager(home, store).discover(project, include_global=False)
    assert found.valid and _manifest_sha(folder) in _rows(store)
    code = ("import sys\nfrom pathlib import Path\nfrom workbench.config.home import Home\n"
            "from workbench.store import Store\nfrom workbench.ext.manager import ExtensionManager\n"
            "home = Home.resolve().ensure()\n"
            "with Store.open(home.db_path) as store:\n"
            "    [found] = ExtensionManager(home, store).discover(Path(sys.argv[1]), include_global=False)\n"
            "print(found.valid, 'jsonschema' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code, str(project)], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ), check=True)
    assert done.stdout.split() == ["True", "False"]
    _break_parameters(folder)
    forged = _manifest_sha(folder)
    store.record_manifest_check(forged, hashlib.sha256(forged.encode()).hexdigest())
    [found] = _manager(home, store).discover(project, include_global=False)
    assert not found.valid
    assert any("not a valid JSON Schema" in problem.describe() for problem in found.errors)
