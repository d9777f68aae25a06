"""Opening the store: pragmas, recorded migrations, and files it must leave untouched."""

from __future__ import annotations

import shutil
import sqlite3
import threading
from pathlib import Path

import pytest
from sqlite_utils import Database

from workbench.config.home import Home
from workbench.errors import ExitCode, StoreCorruptError, StoreError, StoreTooNewError
from workbench.store import LATEST_VERSION, MIGRATIONS, Store
from workbench.store.migrations import Migration, m001_initial, migrate


def _snapshot(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def test_open_creates_file_and_parent(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "folder" / "workbench.db"
    with Store.open(path) as store:
        assert path.is_file()
        assert store.path == path
        assert store.schema_version == LATEST_VERSION == MIGRATIONS[-1].number


def test_open_at_the_home_db_path(home: Home) -> None:
    with Store.open(home.db_path) as store:
        assert store.path == home.db_path


def test_pragmas(tmp_path: Path) -> None:
    with Store.open(tmp_path / "w.db") as store:
        assert store._one("PRAGMA journal_mode") == {"journal_mode": "wal"}
        assert store._one("PRAGMA foreign_keys") == {"foreign_keys": 1}
        assert store._one("PRAGMA synchronous") == {"synchronous": 1}
        assert store._one("PRAGMA busy_timeout")["timeout"] >= 1000


def test_migrations_recorded_in_table_and_user_version(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    Store.open(path).close()
    db = Database(path)
    rows = list(db.query("SELECT number, name, applied_at FROM _migrations"))
    assert [(r["number"], r["name"]) for r in rows] == [
        (1, "m001_initial"), (2, "m002_extension_consent"), (3, "m003_memories_and_schedules"),
        (4, "m004_session_extension_switches"), (5, "m005_schedule_runs"),
        (6, "m006_session_folder"), (7, "m007_session_tool_switches"),
        (8, "m008_session_declines"), (9, "m009_call_owners_and_leases"),
        (10, "m010_project_extension_consents"), (11, "m011_grant_pins"), (12, "m012_change_sets"),
        (13, "m013_session_shell_hosts"), (14, "m014_settled_through"),
        (15, "m015_manifest_checks"), (16, "m016_plugin_runs"), (17, "m017_outside_changes")]
    assert rows[0]["applied_at"] > 1_600_000_000_000
    assert db.execute("PRAGMA user_version").fetchone()[0] == LATEST_VERSION
    assert {"sessions", "messages", "tool_calls", "grants", "extensions", "audit_log",
            "extension_files", "extension_consents", "memories",
            "scheduled_prompts", "session_extensions", "schedule_cards", "schedule_runs",
            "notifications", "session_leases", "project_extensions"} <= set(db.table_names())
    db.close()


def test_reopening_applies_nothing_again(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    with Store.open(path) as store:
        store.create_session(title="kept")
    with Store.open(path) as store:
        assert [s["title"] for s in store.list_sessions()] == ["kept"]
        assert len(store.applied_migrations()) == len(MIGRATIONS)


def test_failed_migration_rolls_back_whole_step(tmp_path: Path) -> None:
    db = Database(sqlite3.connect(tmp_path / "w.db"))

    def broken(target: Database) -> None:
        target.execute("CREATE TABLE half_done (x)")
        target.execute("THIS IS NOT SQL")

    steps = (Migration(1, "m001_initial", m001_initial), Migration(2, "m002_broken", broken))
    with pytest.raises(sqlite3.OperationalError):
        migrate(db, "w.db", steps)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 1
    assert "half_done" not in db.table_names()
    assert [r["number"] for r in db.query("SELECT number FROM _migrations")] == [1]
    db.close()


def test_store_too_new_is_refused_and_untouched(tmp_path: Path) -> None:
    original = tmp_path / "w.db"
    with Store.open(original) as store:
        store.create_session(title="from the future")
    copy = tmp_path / "copy.db"
    shutil.copy(original, copy)
    conn = sqlite3.connect(copy)
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    before = _snapshot(copy)
    with pytest.raises(StoreTooNewError) as caught:
        Store.open(copy)
    error = caught.value
    assert error.exit_code == ExitCode.STORE_TOO_NEW == 5
    assert str(copy) in str(error)
    assert "99" in error.message and str(LATEST_VERSION) in error.message
    assert _snapshot(copy) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("copy")) == ["copy.db"]


def test_store_too_new_in_an_open_wal_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    Store.open(path).close()
    writer = sqlite3.connect(path)
    writer.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
    writer.commit()
    try:
        before = _snapshot(path)
        with pytest.raises(StoreTooNewError):
            Store.open(path)
        assert _snapshot(path) == before
    finally:
        writer.close()


@pytest.mark.parametrize("content", [
    b"this is not a database at all, just some words" * 10,
    b"SQLite",
    b"\x00" * 4096,
], ids=["words", "short", "zeros"])
def test_garbage_file_is_refused_and_untouched(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "w.db"
    path.write_bytes(content)
    before = _snapshot(path)
    with pytest.raises(StoreCorruptError) as caught:
        Store.open(path)
    assert isinstance(caught.value, StoreError)
    assert caught.value.where == str(path)
    assert _snapshot(path) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("w.db")] == ["w.db"]


@pytest.mark.parametrize("filler", [b"\x00", b"\xff"], ids=["zeros", "ones"])
def test_sqlite_header_with_corrupt_body_is_refused(tmp_path: Path, filler: bytes) -> None:
    path = tmp_path / "w.db"
    Store.open(path).close()
    header = path.read_bytes()[:100]
    path.write_bytes(header + filler * (8192 - len(header)))
    before = _snapshot(path)
    with pytest.raises(StoreCorruptError) as caught:
        Store.open(path)
    assert str(path) in str(caught.value)
    assert _snapshot(path) == before
    # Nothing beside it but the reserve the first open made (no journal, WAL or shm).
    assert sorted(p.name for p in tmp_path.iterdir()
                  if p.name.startswith("w.db")) == ["w.db", "w.db.reserve"]


def test_header_of_garbage_is_not_read_as_a_version(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4080)
    with pytest.raises(StoreCorruptError):
        Store.open(path)


def test_foreign_database_with_clashing_table(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE sessions (whatever)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="sessions") as caught:
        Store.open(path)
    assert caught.value.where == str(path)


def test_empty_file_becomes_a_store(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    path.touch()
    with Store.open(path) as store:
        assert store.schema_version == LATEST_VERSION


def test_folder_in_place_of_file(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    path.mkdir()
    with pytest.raises(StoreError):
        Store.open(path)


def test_transaction_rolls_back_together(tmp_path: Path) -> None:
    with Store.open(tmp_path / "w.db") as store:
        with pytest.raises(RuntimeError):
            with store.transaction():
                session = store.create_session(title="gone")
                store.add_message(session["id"], "user", "hello")
                store.audit("user", "test", session["id"])
                raise RuntimeError("abort")
        assert store.list_sessions() == []
        assert store.list_audit() == []


def test_nested_transactions(tmp_path: Path) -> None:
    with Store.open(tmp_path / "w.db") as store:
        with store.transaction():
            kept = store.create_session(title="kept")
            with pytest.raises(ValueError):
                with store.transaction():
                    store.create_session(title="inner")
                    raise ValueError
        assert [s["id"] for s in store.list_sessions()] == [kept["id"]]


def test_threads_share_one_store(tmp_path: Path) -> None:
    with Store.open(tmp_path / "w.db") as store:
        session = store.create_session()
        errors: list[BaseException] = []

        def write(n: int) -> None:
            try:
                for i in range(25):
                    store.add_message(session["id"], "user", f"{n}-{i}")
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        messages = store.list_messages(session["id"])
        assert [m["seq"] for m in messages] == list(range(1, 101))


def test_two_connections_in_one_file(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    with Store.open(path) as first, Store.open(path) as second:
        made = first.create_session(title="shared")
        assert second.get_session(made["id"])["title"] == "shared"
