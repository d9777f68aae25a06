"""A tool's log lines in the host's rotated log file and in the call's record."""

from __future__ import annotations

from pathlib import Path

from workbench.core import call_log
from workbench.core.call_log import CallLog
from workbench.store import Store


def test_lines_are_kept_with_the_call_and_the_file_rotates(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(call_log, "MAX_FILE_BYTES", 2000)
    monkeypatch.setattr(call_log, "MAX_LINES", 5)
    with Store.open(tmp_path / "store.db") as store:
        log = CallLog(store, tmp_path / "logs")
        store.start_tool_call("c1", "garden.tend", {}, "user", defer=True)
        for index in range(40):
            log.write("c1", "garden.tend", "info", f"line {index} " + "x" * 100)
        log.write("c1", "garden.tend", "error", "y" * (call_log.MAX_LINE_CHARS + 50))
        log.finish("c1", "garden.tend")
        store.finish_tool_call("c1", "ok", defer=True)
        record = store.tool_call_log("c1")
        log.close()
    assert [line["message"].split(" ")[0:2] for line in record[:5]] == [
        ["line", str(index)] for index in range(5)]
    assert record[-1] == {"at": record[-1]["at"], "level": "warn",
                          "message": f"36 more log lines are in {tmp_path / 'logs' / 'tools.log'}"}
    assert len(record) == 6
    files = sorted(p.name for p in (tmp_path / "logs").iterdir())
    assert files == ["tools.log", "tools.log.1", "tools.log.2", "tools.log.3"]
    assert all(p.stat().st_size <= 2000 + call_log.MAX_LINE_CHARS + 200
               for p in (tmp_path / "logs").iterdir())
    last = (tmp_path / "logs" / "tools.log").read_text().splitlines()[-1]
    assert last.endswith("y" * 10 + "…") and "ERROR garden.tend [c1]" in last


def test_a_call_without_lines_and_an_unknown_call_have_empty_logs(tmp_path: Path) -> None:
    with Store.open(tmp_path / "store.db") as store:
        store.start_tool_call("c2", "garden.tend", {}, "user")
        store.finish_tool_call("c2", "ok")
        assert store.tool_call_log("c2") == [] and store.tool_call_log("nope") == []
