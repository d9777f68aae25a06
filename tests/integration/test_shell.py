"""The ``shell`` tool with real commands in real sandbox workers: a project's ``make``,
its tests with ``python -m pytest``, ``git status``; its changes applied as one change
set and undone; a file the person changed meanwhile kept, the command's version beside
it; the time limit, the 64 KiB cut, a process tree that dies with the call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest
from processes import processes_with
from shells import python_programs
from waits import until

from workbench.events import NetworkRequest, PermissionRequest


async def test_a_command_sees_the_project_and_its_changes_land_as_one_change_set(shell_lab):
    project = shell_lab.project
    (project / "notes.txt").write_text("one\n")
    (project / "old").mkdir()
    (project / "old" / "gone.txt").write_text("bye\n")
    answer = await shell_lab.run("cat notes.txt; echo two >> notes.txt; echo new > made.txt; "
                                 "rm -r old; mkdir -p d/e; echo deep > d/e/f; chmod +x made.txt; pwd")
    assert answer["exit_code"] == 0
    assert answer["output"] == f"one\n{project}\n"
    assert (project / "notes.txt").read_text() == "one\ntwo\n"
    assert (project / "made.txt").read_text() == "new\n"
    assert os.stat(project / "made.txt").st_mode & 0o777 == 0o755
    assert not (project / "old").exists()
    assert (project / "d" / "e" / "f").read_text() == "deep\n"
    changed = {row["path"]: row["action"] for row in answer["changes"]}
    assert changed == {"notes.txt": "modified", "made.txt": "added", "old/gone.txt": "deleted",
                       "old": "deleted", "d": "added", "d/e": "added", "d/e/f": "added"}
    listed = shell_lab.host.changes.list()
    assert [row["id"] for row in listed] == [answer["change_set"]]
    assert listed[0]["files"] == 7 and listed[0]["state"] == "applied"


async def test_undo_puts_everything_back(shell_lab):
    project = shell_lab.project
    (project / "keep.txt").write_text("original\n")
    os.chmod(project / "keep.txt", 0o640)
    (project / "tree").mkdir()
    (project / "tree" / "leaf").write_text("leaf\n")
    answer = await shell_lab.run("echo changed > keep.txt; chmod 600 keep.txt; rm -r tree; "
                                 "echo added > added.txt; ln -s keep.txt link")
    undone = shell_lab.host.changes.undo(answer["change_set"])
    assert undone["state"] == "undone" and undone["kept"] == []
    assert (project / "keep.txt").read_text() == "original\n"
    assert os.stat(project / "keep.txt").st_mode & 0o777 == 0o640
    assert (project / "tree" / "leaf").read_text() == "leaf\n"
    assert not (project / "added.txt").exists() and not (project / "link").is_symlink()
    assert shell_lab.host.changes.show(answer["change_set"])["state"] == "undone"


async def test_undo_keeps_a_file_the_person_changed_since(shell_lab):
    project = shell_lab.project
    (project / "a.txt").write_text("a\n")
    (project / "b.txt").write_text("b\n")
    answer = await shell_lab.run("echo shell >> a.txt; echo shell >> b.txt")
    (project / "a.txt").write_text("the person's\n")
    undone = shell_lab.host.changes.undo(answer["change_set"])
    assert undone["state"] == "partly undone"
    assert [k["path"] for k in undone["kept"]] == ["a.txt"]
    assert "your version stays" in undone["kept"][0]["why"]
    assert (project / "a.txt").read_text() == "the person's\n"
    assert (project / "b.txt").read_text() == "b\n"


async def test_a_file_changed_meanwhile_keeps_the_persons_version_and_the_commands_beside_it(shell_lab):
    project = shell_lab.project
    (project / "shared.txt").write_text("start\n")
    marker = uuid.uuid4().hex
    # The command waits until it reads the person's change (the overlay reads the real
    # file until it is copied up), then writes its own version.
    running = shell_lab.start(f"until grep -q person shared.txt; do sleep 0.02; done; "
                              f"echo command > shared.txt # {marker}")
    await until(lambda: processes_with(marker), "the command starting")
    (project / "shared.txt").write_text("person\n")
    outcome = await running
    assert outcome.ok, outcome.error
    answer = outcome.result
    assert (project / "shared.txt").read_text() == "person\n"
    copy = f"shared.txt.shell-{answer['change_set']}"
    assert (project / copy).read_text() == "command\n"
    assert answer["changes"] == [{"path": "shared.txt", "action": "conflict", "copy": copy}]
    assert copy in answer["conflicts"][0]
    undone = shell_lab.host.changes.undo(answer["change_set"])
    assert undone["state"] == "undone" and not (project / copy).exists()
    assert (project / "shared.txt").read_text() == "person\n"


async def test_make_builds_in_the_project(shell_lab):
    project = shell_lab.project
    (project / "Makefile").write_text("out.txt: in.txt\n\ttr a-z A-Z < in.txt > out.txt\n")
    (project / "in.txt").write_text("hello make\n")
    answer = await shell_lab.run("make")
    assert answer["exit_code"] == 0, answer["output"]
    assert (project / "out.txt").read_text() == "HELLO MAKE\n"
    assert [row["path"] for row in answer["changes"]] == ["out.txt"]


@pytest.fixture
def shell_config() -> str:
    return f"[shell]\nprograms = {python_programs()}\n"


async def test_python_runs_a_tiny_projects_tests(shell_lab):
    project = shell_lab.project
    (project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (project / "test_calc.py").write_text(
        "import unittest\n\nfrom calc import add\n\n\nclass Calc(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n"
        "    def test_fails(self):\n        self.assertEqual(add(2, 2), 5)\n")
    # The host's own Python (the shell's /tmp is its own, so a virtual environment
    # under /tmp, as a fresh clone's, is out of its reach).
    python = os.path.realpath(sys.executable)
    answer = await shell_lab.run(f"{python} -B -m unittest test_calc", timeout_s=120)
    assert answer["exit_code"] == 1, answer["output"]
    assert "Ran 2 tests" in answer["output"] and "FAILED (failures=1)" in answer["output"]


async def test_git_status_in_the_project(shell_lab):
    project = shell_lab.project
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "tracked.txt").write_text("x\n")
    answer = await shell_lab.run("git status --porcelain")
    assert answer["exit_code"] == 0, answer["output"]
    assert "?? tracked.txt" in answer["output"]


async def test_a_command_stops_at_its_time_limit_and_leaves_no_process(shell_lab):
    marker = uuid.uuid4().hex
    answer = await shell_lab.run(f"(sleep 300 # {marker}\n) & sleep 300 # {marker}", timeout_s=1)
    assert answer["exit_code"] is None and "time limit" in answer["ended"]
    await until(lambda: not processes_with(marker), "the command's processes ending")


async def test_background_processes_die_with_the_call(shell_lab):
    marker = uuid.uuid4().hex
    answer = await shell_lab.run(f"nohup sleep 300 >/dev/null 2>&1 & disown; setsid sleep 301 & "
                                 f"echo started # {marker}")
    assert answer["exit_code"] == 0 and "started" in answer["output"]
    await until(lambda: not processes_with(marker) and not processes_with("sleep 301"),
                "the background processes ending")


async def test_the_answer_is_cut_at_64_kib_and_says_so(shell_lab):
    answer = await shell_lab.run("head -c 300000 /dev/zero | tr '\\0' a; echo; echo the-end")
    assert answer["output_bytes"] == 300009
    assert len(answer["output"].encode()) < 66_000
    assert answer["output"].startswith("a" * 1000) and answer["output"].endswith("the-end\n")
    assert "cut at 64 KiB" in answer["output_cut"] and "cut at 64 KiB" in answer["output"]


async def test_output_is_made_safe_for_a_terminal(shell_lab):
    answer = await shell_lab.run(r"printf '\033]0;title\007\033[2Jplain\n'")
    assert "\x1b" not in answer["output"] and "\x07" not in answer["output"]
    assert "\\u001b" in answer["output"] and "plain" in answer["output"]


async def test_exit_codes_and_stderr_come_back(shell_lab):
    answer = await shell_lab.run("echo out; echo err >&2; exit 3")
    assert answer["exit_code"] == 3
    assert "out" in answer["output"] and "err" in answer["output"]
    assert answer["change_set"] is None and answer["changes"] == []


def test_the_cli_lists_shows_and_undoes_change_sets(tmp_path, home):
    import asyncio

    from workbench.core.gateway import CallOptions
    from workbench.core.host import Host

    project = tmp_path / "project"
    project.mkdir()
    (project / "f.txt").write_text("before\n")

    async def change() -> int:
        async with Host.open(cwd=project, model="echo") as host:
            outcome = await host.tools.call("shell", {"command": "echo after > f.txt"},
                                            CallOptions(grants=(("run", "bash"), ("write", str(project)))))
            assert outcome.ok, outcome.error
            return outcome.result["change_set"]

    change_set = asyncio.run(change())

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "workbench", "changes", *args],
                              capture_output=True, text=True, env=dict(os.environ), timeout=60)

    listed = cli("list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [row["id"] for row in json.loads(listed.stdout)] == [change_set]
    shown = cli("show", str(change_set))
    assert "modified  f.txt" in shown.stdout and "echo after > f.txt" in shown.stdout
    undone = cli("undo", str(change_set), "--json")
    assert undone.returncode == 0, undone.stderr
    assert json.loads(undone.stdout)["state"] == "undone"
    assert (project / "f.txt").read_text() == "before\n"
    again = cli("undo", str(change_set))
    assert again.returncode != 0 and "undone already" in again.stderr
    missing = cli("show", "999")
    assert missing.returncode != 0 and "no change set 999" in missing.stderr
    assert "Traceback" not in missing.stderr


async def test_the_prompt_names_this_project_as_the_file_tools_do(shell_lab):
    await shell_lab.run("true")
    asked = [r for r in shell_lab.answers.asked if isinstance(r, PermissionRequest)]
    assert [r.tool for r in asked] == ["shell.shell"]
    # run bash is granted for the call by the lab; the project is what is asked for
    (entry,) = asked[0].permissions
    assert (entry["kind"], entry["value"], entry["project"]) == ("write", str(shell_lab.project), True)
    assert entry["shown"] == f"this project ({shell_lab.project})"


async def test_a_program_under_tmp_is_said_to_be_missing_because_the_shells_tmp_is_its_own(shell_lab):
    """The shell's /tmp is its own: a program there on the host is not found, and the
    answer says why instead of bash's bare "No such file"."""
    answer = await shell_lab.run("/tmp/venv/bin/python -V")
    assert answer["exit_code"] == 127 and "No such file or directory" in answer["output"]
    assert answer["note"].startswith("/tmp/venv/bin/python was not found because the shell's "
                                     "/tmp is its own")
    answer = await shell_lab.run("source /tmp/venv/bin/activate && pytest")
    assert answer["exit_code"] != 0
    assert answer["note"].startswith("/tmp/venv/bin/activate was not found because")
    assert not (shell_lab.project / "absent").exists()
    plain = await shell_lab.run("ls absent")  # missing in the project itself: no note
    assert plain["exit_code"] != 0 and "note" not in plain, plain


async def test_the_exit_code_is_always_the_commands_own(shell_lab):
    """The supervisor reads PID 1's status the middle process sent before it ended,
    whichever of the two the poll lists first: once in about forty commands the old
    code answered the middle process's 0 for a command that failed."""
    wrong = []
    for _ in range(60):
        answer = await shell_lab.run("c=$((RANDOM % 200 + 1)); echo $c; exit $c")
        if answer["exit_code"] != int(answer["output"]):
            wrong.append((answer["output"].strip(), answer["exit_code"]))
    assert not wrong, f"exit codes answered wrong (said, answered): {wrong}"


async def test_a_scripts_interpreter_under_tmp_is_said_to_be_missing_too(shell_lab, tmp_path):
    """Bash 5.2 says only "cannot execute: required file not found" for a script whose
    ``#!`` names a missing interpreter; when that interpreter is under /tmp, the note
    says why (read from the script's first line in the project, nothing else)."""
    script = shell_lab.project / "run.sh"
    script.write_text("#!/tmp/venv/bin/python\nprint(1)\n")
    script.chmod(0o755)
    answer = await shell_lab.run("./run.sh")
    assert answer["exit_code"] == 127, answer
    assert answer["note"].startswith("/tmp/venv/bin/python was not found because the shell's "
                                     "/tmp is its own"), answer
    script.write_text("#!/usr/bin/env -S /tmp/v/bin/python3 -u\nprint(1)\n")
    answer = await shell_lab.run(f"{script}")
    assert answer["note"].startswith("/tmp/v/bin/python3 was not found"), answer
    # a missing interpreter elsewhere is bash's own answer, with no note
    script.write_text("#!/opt/nothing/python\n")
    answer = await shell_lab.run("./run.sh")
    assert answer["exit_code"] == 127 and "note" not in answer, answer


async def test_what_a_command_prints_never_makes_the_host_read_past_the_project(shell_lab, tmp_path):
    """The note reads a script's first line only beneath the project, a regular file,
    no link followed: a command that prints bash's message naming a file outside, a
    link out, a FIFO or a ``#!`` line with hostile text gets no note, at once."""
    outside = tmp_path / "outside.sh"
    outside.write_text("#!/tmp/leaked-from-outside\n")
    (shell_lab.project / "link.sh").symlink_to(outside)
    os.mkfifo(shell_lab.project / "pipe.sh")
    (shell_lab.project / "odd.sh").write_text("#!/tmp/x\x1b]0;owned\x07\n")
    (shell_lab.project / "long.sh").write_text("#!/tmp/" + "a" * 5000 + "\n")
    for named in (str(outside), "../outside.sh", "link.sh", "pipe.sh", "odd.sh", "long.sh"):
        answer = await shell_lab.run(
            f"echo 'bash: line 1: {named}: cannot execute: required file not found'; exit 127")
        assert answer["exit_code"] == 127 and "note" not in answer, (named, answer)


def test_a_chats_allowed_hosts_are_kept_with_it_and_its_network_set_from_the_cli(tmp_path, home):
    """"Allow for this chat" on a network card holds in the resumed chat (kept in the
    store), and `workbench sessions network` reads and sets the chat's network, never
    past the ceiling from the person's own config."""
    import asyncio

    from commands import workbench
    from shells import GRANT, Answers, write_config

    from workbench.core.gateway import CallOptions
    from workbench.core.host import Host

    project = tmp_path / "project"
    project.mkdir()
    write_config(home.root, '[shell]\nnetwork_ceiling = "all"\n')
    command = "curl -sS --max-time 10 -o /dev/null https://example.com/; true"

    async def call(answers: Answers, session_id: str | None = None) -> str:
        async with Host.open(cwd=project, model="echo", responder=answers) as host:
            session_id = session_id or host.chats.new("network")["id"]
            outcome = await host.tools.call("shell", {"command": command},
                                           CallOptions(grants=GRANT, session_id=session_id))
            assert outcome.ok, outcome.error
            return session_id

    first = Answers(["chat"])
    session_id = asyncio.run(call(first))
    assert [(r.host, r.port) for r in first.asked if isinstance(r, NetworkRequest)] == [("example.com", 443)]
    resumed = Answers([])  # a card now would be denied: "no answer left"
    asyncio.run(call(resumed, session_id))
    assert not [r for r in resumed.asked if isinstance(r, NetworkRequest)]

    shown = workbench("sessions", "network", session_id[:12], "--json")
    assert shown.returncode == 0, shown.stderr
    found = json.loads(shown.stdout)
    assert found["allowed_hosts"] == ["example.com"] and found["level"] == "off"
    assert found["ceiling"] == "all" and found["chosen"] is None

    chosen = workbench("sessions", "network", session_id, "registries")
    assert chosen.returncode == 0, chosen.stderr
    assert "the shell reaches Package registries (PyPI, npm, Debian) (its own choice)" in chosen.stdout
    assert "Allowed for this session from a network card: example.com" in chosen.stdout

    write_config(home.root, '[shell]\nnetwork_ceiling = "registries"\n')
    capped = workbench("sessions", "network", session_id, "all")
    assert capped.returncode == 0, capped.stderr
    assert "the shell reaches Package registries (PyPI, npm, Debian)" in capped.stdout
    assert "All public sites is beyond the ceiling shell.network_ceiling" in capped.stderr

    back = workbench("sessions", "network", session_id, "default", "--json")
    assert json.loads(back.stdout)["chosen"] is None and json.loads(back.stdout)["level"] == "off"
    wrong = workbench("sessions", "network", session_id, "everything")
    assert wrong.returncode != 0 and "the network must be one of off, registries, all" in wrong.stderr
    unknown = workbench("sessions", "network", "nosuchsession", "off")
    assert unknown.returncode != 0 and "nosuchsession" in unknown.stderr
