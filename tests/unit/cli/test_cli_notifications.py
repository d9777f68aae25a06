"""``workbench notifications list|read``: what was kept for the person, and marking it read."""

from __future__ import annotations

import json

import pytest

from commands import workbench

from workbench.config.home import Home
from workbench.store import Store


@pytest.fixture
def posted(home: Home) -> list[int]:
    """Three notifications, as the scheduler posts them; the first one already read."""
    with Store.open(home.db_path) as store:
        ids = [store.add_notification("info", "Backup done", "All 3 folders copied.", source="scheduler"),
               store.add_notification("error", "Daily digest failed",
                                      "the model was unreachable\nit will run again tomorrow",
                                      source="scheduler"),
               store.add_notification("warning", "Weekly report paused", "it needs a grant",
                                      source="scheduler")]
        store.mark_notifications_read([ids[0]])
    return ids


def _listed(*flags: str) -> list[dict]:
    done = workbench("notifications", "list", "--json", *flags)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_list_is_newest_first_and_marks_the_unread(posted: list[int]) -> None:
    rows = _listed()
    assert [r["id"] for r in rows] == posted[::-1]
    assert [r["read_at"] is None for r in rows] == [True, True, False]
    assert (rows[1]["level"], rows[1]["title"], rows[1]["source"]) == ("error", "Daily digest failed", "scheduler")
    assert [r["id"] for r in _listed("--unread")] == [posted[2], posted[1]]
    assert [r["id"] for r in _listed("--limit", "1")] == [posted[2]]

    plain = workbench("notifications", "list").stdout.splitlines()
    assert plain[0].startswith(f"* {posted[2]:>4}  ") and plain[0].endswith("warning  Weekly report paused")
    assert plain[3:5] == ["        the model was unreachable", "        it will run again tomorrow"]
    assert plain[5].startswith(f"  {posted[0]:>4}  ") and plain[5].endswith("info     Backup done")


def test_reading_one_then_all(posted: list[int]) -> None:
    done = workbench("notifications", "read", str(posted[1]))
    assert (done.returncode, done.stdout) == (0, "Marked 1 notification read.\n")
    assert [r["id"] for r in _listed("--unread")] == [posted[2]]
    again = workbench("notifications", "read", str(posted[1]))  # already read: nothing changes
    assert (again.returncode, again.stdout) == (0, "Marked 0 notifications read.\n")
    done = workbench("notifications", "read", "--all")
    assert (done.returncode, done.stdout) == (0, "Marked 1 notification read.\n")
    assert _listed("--unread") == []
    assert workbench("notifications", "list", "--unread").stdout == "No unread notifications.\n"


def test_read_says_what_is_wrong(posted: list[int]) -> None:
    missing = workbench("notifications", "read", str(posted[1]), "99")
    assert missing.returncode == 1
    assert missing.stderr == "error: no notification 99; `workbench notifications list` shows them\n"
    assert [r["id"] for r in _listed("--unread")] == [posted[2], posted[1]]  # nothing marked
    for args in ((), (str(posted[1]), "--all")):
        usage = workbench("notifications", "read", *args)
        assert usage.returncode == 2
        assert usage.stderr == "error: name the notifications to mark read, or give --all (not both)\n"


def test_an_empty_home_has_no_notifications(home: Home) -> None:
    assert workbench("notifications", "list").stdout == "No notifications.\n"
    assert _listed() == []
