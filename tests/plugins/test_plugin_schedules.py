"""Plugins' scheduled actions: a trusted project's `[plugins.ID.schedules.ACTION]`
entries become tasks of the supervisor, paused, changed and removed with the config,
and a real `workbench daemon` calls the action with `"trigger": "schedule"`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from plugin_folders import EXAMPLE, trusted_project
from workbench.config.trust import trust_project
from workbench.core.host import Host
from workbench.core.plugin_service import open_plugins
from workbench.store import Store

pytestmark = pytest.mark.slow

CONFIG = """[plugins.echo]
enabled = true
[plugins.echo.schedules.ping]
type = "interval"
schedule = "90s"
[plugins.echo.schedules.daily]
enabled = false
[plugins.echo.schedules.nothing]
type = "interval"
schedule = "1m"
"""


def write_config(home, project: Path, text: str) -> None:
    (project / ".workbench" / "config.toml").write_text(text, encoding="utf-8")
    trust_project(home, project)


def tasks(home, project: Path) -> dict[str, tuple]:
    with Store.open(home.db_path) as store:
        return {t["action"]: (t["enabled"], store.get_schedule(t["schedule_id"])["schedule"])
                for t in store.plugin_tasks(str(project.resolve()))}


async def test_a_projects_entries_become_tasks_that_follow_its_config(home, workdir: Path) -> None:
    project = trusted_project(home, workdir, "echo")
    service = open_plugins(project)
    await service.install(service.plan(EXAMPLE))
    (project / ".workbench" / "config.toml").write_text(CONFIG, encoding="utf-8")
    Host.open(cwd=project).close()
    assert tasks(home, project) == {}  # the entries wait for trust, as enabled does
    write_config(home, project, CONFIG)
    with Host.open(cwd=project) as host:
        assert any("declares no action 'nothing'" in n for n in host.plugins.applies("echo").notes)
    assert tasks(home, project) == {"ping": (True, {"kind": "interval", "everyMinutes": 2}),
                                    "daily": (False, {"kind": "cron", "expr": "0 9 * * *"})}
    write_config(home, project, CONFIG.replace("enabled = true", "enabled = false", 1))
    Host.open(cwd=project).close()
    assert tasks(home, project)["ping"][0] is False  # paused while the project does not enable it
    write_config(home, project, "[plugins.echo]\nenabled = true\n[plugins.echo.schedules.ping]\n"
                                'type = "cron"\nschedule = "*/5 * * * *"\n')
    Host.open(cwd=project).close()
    assert tasks(home, project) == {"ping": (True, {"kind": "cron", "expr": "*/5 * * * *"})}


def test_the_daemon_runs_a_scheduled_action(home, workdir: Path, tmp_path: Path) -> None:
    project = trusted_project(home, workdir, "echo")
    done = subprocess.run([sys.executable, "-m", "workbench", "plugin", "install", str(EXAMPLE), "--yes"],
                          capture_output=True, text=True, cwd=project, env=dict(os.environ), timeout=120)
    assert done.returncode == 0, done.stderr
    write_config(home, project, CONFIG)
    Host.open(cwd=project).close()
    with Store.open(home.db_path) as store:
        [task] = [t for t in store.plugin_tasks(str(project.resolve())) if t["action"] == "ping"]
        now = store.clock()  # the task's window due now, as the supervisor would find it
        store.update_schedule(task["schedule_id"], anchor_at=now - 120_000, last_due_at=now - 120_000,
                              next_due_at=now)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    daemon = subprocess.Popen([sys.executable, "-m", "workbench", "daemon", "--jsonl"], cwd=elsewhere,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ))
    try:
        pings = home.root / "plugins" / "echo" / "data"
        deadline = time.monotonic() + 90
        found: list[dict] = []
        while not found:
            assert time.monotonic() < deadline, "the daemon did not call the action"
            assert daemon.poll() is None, daemon.stderr.read().decode() if daemon.stderr else ""
            found = [json.loads(line) for f in pings.glob("*/pings.jsonl") for line in f.read_text().splitlines()]
            time.sleep(0.1)
        assert found[0]["trigger"] == "schedule"
        with Store.open(home.db_path) as store:
            deadline = time.monotonic() + 30
            while not (runs := store.list_runs(schedule_id=task["schedule_id"], statuses=("ok",), limit=None)):
                assert time.monotonic() < deadline, store.list_runs(schedule_id=task["schedule_id"], limit=None)
                time.sleep(0.1)
        assert runs[0]["fired_by"] == "schedule" and "accepted ping (202)" in runs[0]["result"]
    finally:
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=30) == 0
