"""A kill at any step of a change leaves no half-installed extension; the next start repairs.

Each install, update or removal runs in a child process told (through the test-only
``WORKBENCH_TEST_CRASH_AT`` variable) to SIGKILL itself at one step of the commit.
A new manager is then started on the same home.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from ext_samples import tree, write_extension, yes

from workbench.config.home import Home
from workbench.ext.manager import CRASH_ENV, ExtensionManager
from workbench.ext.staging import write_journal
from workbench.store import Store

NAME = "loca-extension-foo"

CHILD = """
import sys
from workbench.config.home import Home
from workbench.ext.manager import ExtensionManager
from workbench.store import Store

home = Home.resolve().ensure()
store = Store.open(home.db_path)
manager = ExtensionManager(home, store, registry_url="http://127.0.0.1:9")
operation, argument = sys.argv[1], sys.argv[2]
if operation == "install":
    manager.install(argument, approve=lambda plan: True)
elif operation == "update":
    manager.update("loca-extension-foo", source=argument, approve=lambda plan: True)
else:
    manager.remove(argument)
print("finished")
"""


def _run(step: str | None, operation: str, argument: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop(CRASH_ENV, None)
    if step:
        env[CRASH_ENV] = step
    return subprocess.run([sys.executable, "-c", CHILD, operation, argument], env=env,
                          capture_output=True, text=True, timeout=60)


def _killed(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stdout, done.stderr)
    assert "finished" not in done.stdout


def _restart(home: Home) -> tuple[ExtensionManager, Store]:
    store = Store.open(home.db_path)
    return ExtensionManager(home, store, registry_url="http://127.0.0.1:9"), store


def _staging_is_empty(home: Home) -> bool:
    staging = home.root / "staging"
    return not staging.exists() or not any(staging.iterdir())


def test_killed_before_the_rename_installs_nothing(home: Home, tmp_path: Path) -> None:
    source = write_extension(tmp_path / "v1")
    _killed(_run("before-commit", "install", str(source)))
    assert any((home.root / "staging").iterdir())
    assert not (home.extensions_dir / NAME).exists()

    manager, store = _restart(home)
    with store:
        assert [r.action for r in manager.repairs] == ["cleaned"]
        assert manager.list() == [] and store.get_extension(NAME) is None
        assert _staging_is_empty(home)


def test_killed_after_the_rename_finishes_the_install(home: Home, tmp_path: Path) -> None:
    source = write_extension(tmp_path / "v1")
    _killed(_run("after-rename", "install", str(source)))
    assert (home.extensions_dir / NAME).is_dir()

    manager, store = _restart(home)
    with store:
        assert [(r.name, r.action) for r in manager.repairs] == [(NAME, "finished")]
        [installed] = manager.list()
        assert installed.state == "ok" and installed.source == str(source)
        assert store.get_consent(NAME)["digest"] == installed.digest
        assert _staging_is_empty(home)


def test_killed_after_the_store_write_is_installed(home: Home, tmp_path: Path) -> None:
    source = write_extension(tmp_path / "v1")
    _killed(_run("after-store", "install", str(source)))
    manager, store = _restart(home)
    with store:
        assert [r.action for r in manager.repairs] == ["cleaned"]
        assert [(e.name, e.state) for e in manager.list()] == [(NAME, "ok")]
        assert _staging_is_empty(home)


def _installed_v1(home: Home, tmp_path: Path) -> Path:
    source = write_extension(tmp_path / "v1", version="1.0.0")
    assert _run(None, "install", str(source)).returncode == 0
    (home.extensions_dir / NAME / "data.db").write_bytes(b"the user's rows")
    return write_extension(tmp_path / "v2", version="2.0.0", files={"new.txt": "v2"})


def test_update_killed_with_the_old_folder_aside_puts_it_back(home: Home,
                                                              tmp_path: Path) -> None:
    v2 = _installed_v1(home, tmp_path)
    before = tree(home.extensions_dir)
    _killed(_run("update-aside", "update", str(v2)))
    assert not (home.extensions_dir / NAME).exists()

    manager, store = _restart(home)
    with store:
        assert [r.action for r in manager.repairs] == ["restored"]
        assert "1.0.0" in manager.repairs[0].message
        installed = manager.get(NAME)
        assert (installed.version, installed.state) == ("1.0.0", "ok")
        assert tree(home.extensions_dir) == before
        assert (installed.path / "data.db").read_bytes() == b"the user's rows"


def test_update_killed_after_the_rename_finishes_it(home: Home, tmp_path: Path) -> None:
    v2 = _installed_v1(home, tmp_path)
    _killed(_run("after-rename", "update", str(v2)))
    manager, store = _restart(home)
    with store:
        assert [r.action for r in manager.repairs] == ["finished"]
        installed = manager.get(NAME)
        assert (installed.version, installed.state) == ("2.0.0", "ok")
        assert (installed.path / "new.txt").is_file()
        assert (installed.path / "data.db").read_bytes() == b"the user's rows"
        assert _staging_is_empty(home)


def test_remove_killed_after_the_folder_moved_finishes_it(home: Home, tmp_path: Path) -> None:
    _installed_v1(home, tmp_path)
    _killed(_run("remove-aside", "remove", NAME))
    manager, store = _restart(home)
    with store:
        assert [r.action for r in manager.repairs] == ["removed"]
        assert manager.list() == [] and store.get_extension(NAME) is None
        assert store.extension_files(NAME) == {} and store.get_consent(NAME) is None
        assert _staging_is_empty(home)


def test_a_folder_put_there_by_hand_is_held(home: Home, manager: ExtensionManager,
                                            store: Store) -> None:
    write_extension(home.extensions_dir / NAME)
    write_extension(home.extensions_dir / "mismatch", name="something-else")
    (home.extensions_dir / "not-an-extension").mkdir()
    restarted = ExtensionManager(home, store)
    assert [(r.name, r.action) for r in restarted.repairs] == [(NAME, "recorded")]
    states = {e.name: (e.state, e.reason) for e in restarted.list()}
    assert states[NAME][0] == "held" and "never approved" in states[NAME][1]
    assert states["mismatch"][0] == "broken" and "'something-else'" in states["mismatch"][1]
    assert states["not-an-extension"][0] == "broken"
    restarted.trust(NAME, approve=yes)
    assert restarted.get(NAME).state == "ok"


def test_a_record_without_its_folder_is_forgotten(home: Home, manager: ExtensionManager,
                                                  store: Store, tmp_path: Path) -> None:
    installed = manager.install(str(write_extension(tmp_path / "v1")), approve=yes)
    for path in sorted(installed.path.rglob("*"), reverse=True):
        path.unlink()
    installed.path.rmdir()
    restarted = ExtensionManager(home, store)
    assert [(r.name, r.action) for r in restarted.repairs] == [(NAME, "forgot")]
    assert restarted.list() == [] and store.get_consent(NAME) is None


def test_only_leftovers_of_dead_processes_are_cleaned(home: Home, store: Store) -> None:
    staging = home.root / "staging"
    live = staging / f"{os.getpid()}-cafe"
    dead = staging / "999999999-dead"
    for folder in (live, dead):
        (folder / "pkg").mkdir(parents=True)
    ExtensionManager(home, store)
    assert live.is_dir() and not dead.exists()


def test_a_journal_for_files_that_never_arrived_changes_nothing(home: Home, store: Store) -> None:
    stage = home.root / "staging" / "999999999-x"
    stage.mkdir(parents=True)
    write_journal(stage, {"action": "install", "name": NAME, "digest": "sha256:00"})
    manager = ExtensionManager(home, store)
    assert [r.action for r in manager.repairs] == ["cleaned"]
    assert manager.list() == []


@pytest.mark.parametrize("name", ["../../etc", "a/b", ""])
def test_a_hostile_journal_is_ignored(name: str, home: Home, store: Store) -> None:
    stage = home.root / "staging" / "999999999-y"
    stage.mkdir(parents=True)
    write_journal(stage, {"action": "remove", "name": name})
    manager = ExtensionManager(home, store)
    assert [r.action for r in manager.repairs] == ["cleaned"]


def test_a_finished_removal_drops_what_is_kept_elsewhere(home: Home, tmp_path: Path) -> None:
    _installed_v1(home, tmp_path)
    _killed(_run("remove-aside", "remove", NAME))
    dropped: list[str] = []
    with Store.open(home.db_path) as store:
        manager = ExtensionManager(home, store, on_removed=dropped.append)
        assert [r.action for r in manager.repairs] == ["removed"] and dropped == [NAME]
