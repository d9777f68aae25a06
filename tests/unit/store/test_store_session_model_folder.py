"""Each session keeps its model spec and its project folder (migration m006)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlite_utils import Database

from workbench.store import MIGRATIONS, Store
from workbench.store.migrations import migrate


def test_a_store_of_the_last_version_gains_the_folder_and_keeps_its_sessions(tmp_path: Path):
    path = tmp_path / "w.db"
    db = Database(sqlite3.connect(path))
    migrate(db, str(path), MIGRATIONS[:5])
    db.execute("INSERT INTO sessions (id, title, model, created_at, updated_at) "
               "VALUES ('a' || hex(randomblob(15)), 'old', 'echo', 1, 1)")
    db.conn.commit()
    db.close()
    with Store.open(path) as store:
        assert "m006_session_folder" in [m["name"] for m in store.applied_migrations()]
        [old] = store.list_sessions()
        assert (old["title"], old["model"], old["folder"]) == ("old", "echo", None)


def test_a_session_is_made_with_its_model_and_folder_and_both_can_change(tmp_path: Path):
    with Store.open(tmp_path / "w.db") as store:
        made = store.create_session(title="t", model="scripted:s.json", folder="/projects/a")
        assert (made["model"], made["folder"]) == ("scripted:s.json", "/projects/a")
        assert store.get_session(made["id"][:8])["folder"] == "/projects/a"
        assert store.set_session_model(made["id"], "ext:acme/house")
        assert store.set_session_folder(made["id"], "/projects/b")
        found = store.get_session(made["id"])
        assert (found["model"], found["folder"]) == ("ext:acme/house", "/projects/b")
        assert not store.set_session_model("nope", "echo")
        assert not store.set_session_folder("nope", "/x")
