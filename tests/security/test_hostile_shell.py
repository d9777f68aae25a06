"""Hostile commands against the shell: nothing outside the project is written (through a
link in the project, a link planted for the apply step, a hard link, /tmp, the system
folders), the apply step never makes a setuid file, a device or a FIFO and never
follows a link, the upper layer is bounded, there is no network without the setting
(and a project's config cannot raise the ceiling), and a machine that cannot isolate a
command refuses it, saying why."""

from __future__ import annotations

import os
import stat
import time
import uuid
from pathlib import Path

import pytest
from shells import GRANT, write_config

from workbench.config.trust import trust_project
from workbench.core.gateway import CallOptions
from workbench.events import NetworkRequest
from workbench.sandbox.paths import pin_path


@pytest.fixture
def outside(tmp_path):
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "precious").write_text("precious\n")
    return folder


def untouched(folder) -> bool:
    return sorted(os.listdir(folder)) == ["precious"] and (folder / "precious").read_text() == "precious\n"


async def test_a_link_in_the_project_pointing_out_is_not_written_through(shell_lab, outside):
    (shell_lab.project / "out").symlink_to(outside)
    answer = await shell_lab.run("echo x > out/new; echo y >> out/precious; ls out; true")
    assert untouched(outside)
    assert (shell_lab.project / "out").is_symlink()
    assert answer["changes"] == []


async def test_replacing_a_link_with_a_folder_lands_in_the_project_only(shell_lab, outside):
    (shell_lab.project / "out").symlink_to(outside)
    answer = await shell_lab.run("rm out && mkdir out && echo x > out/precious")
    assert untouched(outside)
    assert not (shell_lab.project / "out").is_symlink()
    assert (shell_lab.project / "out" / "precious").read_text() == "x\n"
    assert {"path": "out/precious", "action": "added"} in answer["changes"]


async def test_a_link_planted_for_the_next_command_leads_nowhere(shell_lab, outside):
    first = await shell_lab.run(f"ln -s {outside} planted")
    assert first["changes"] == [{"path": "planted", "action": "added"}]
    assert os.readlink(shell_lab.project / "planted") == str(outside)
    second = await shell_lab.run("echo x > planted/new; echo y > planted/precious; true")
    assert untouched(outside)
    assert second["changes"] == []


async def test_nothing_outside_the_project_is_writable(shell_lab, tmp_path):
    marker = uuid.uuid4().hex
    answer = await shell_lab.run(
        f"echo x > /etc/shell-{marker}; echo x > /usr/shell-{marker}; echo x > /tmp/shell-{marker}; "
        f"echo x > ../shell-{marker}; echo x > {tmp_path}/shell-{marker}; "
        f"ln /usr/bin/bash hard-{marker}; touch /usr/bin/bash; chmod 777 /dev/null; "
        "ls /.layers; true")
    assert not list(tmp_path.rglob(f"*shell-{marker}*"))
    assert not os.path.exists(f"/etc/shell-{marker}") and not os.path.exists(f"/usr/shell-{marker}")
    assert not os.path.exists(f"/tmp/shell-{marker}")
    assert os.stat("/dev/null").st_mode & 0o777 == 0o666
    assert not (shell_lab.project / f"hard-{marker}").exists()
    assert "Read-only file system" in answer["output"] or "Permission denied" in answer["output"]
    assert "/.layers" in answer["output"]  # not there: the upper layer is out of reach


async def test_the_apply_step_makes_no_setuid_file_no_fifo_and_copies_hard_links(shell_lab):
    answer = await shell_lab.run("cp /usr/bin/true tool && chmod 6755 tool && mkfifo pipe && "
                                 "echo shared > a && ln a b && chmod 1777 . ; true")
    tool = os.stat(shell_lab.project / "tool")
    assert tool.st_mode & (stat.S_ISUID | stat.S_ISGID) == 0 and tool.st_mode & 0o777 == 0o755
    assert not (shell_lab.project / "pipe").exists()
    assert any("pipe: a FIFO" in skipped for skipped in answer["skipped"])
    a, b = os.stat(shell_lab.project / "a"), os.stat(shell_lab.project / "b")
    assert a.st_ino != b.st_ino and a.st_nlink == b.st_nlink == 1
    assert os.stat(shell_lab.project).st_mode & stat.S_ISVTX == 0


def _apply(lab, upper_root):
    """Apply a hand-made upper layer as if its command had started after everything
    the test made (so nothing counts as changed meanwhile)."""
    since_ns = time.time_ns() + 10**9
    fd = os.open(upper_root, os.O_PATH | os.O_DIRECTORY)
    try:
        return lab.host.changes.apply(fd, project=pin_path(str(lab.project)), session_id=None,
                                      command="hostile upper", since_ns=since_ns)
    finally:
        os.close(fd)


async def test_a_hostile_upper_layer_never_reaches_past_the_project(shell_lab, outside, tmp_path):
    """An upper layer made by hand, as a command that fought its way could leave it: a
    folder whose real counterpart is a link out, devices, a FIFO, a socket, setuid."""
    upper = tmp_path / "layers" / "upper"
    (upper / "out").mkdir(parents=True)
    (upper / "out" / "precious").write_text("overwritten\n")
    (shell_lab.project / "out").symlink_to(outside)
    os.mkfifo(upper / "fifo")
    os.mknod(upper / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    os.mknod(upper / "disk", 0o666 | stat.S_IFBLK, os.makedev(7, 0))
    (upper / "suid").write_text("#!/bin/sh\n")
    os.chmod(upper / "suid", 0o4755)
    (upper / "escape").symlink_to("../../outside/precious")
    applied = _apply(shell_lab, tmp_path / "layers")
    assert untouched(outside)
    project = shell_lab.project
    assert (project / "out" / "precious").read_text() == "overwritten\n" and not (project / "out").is_symlink()
    for name in ("fifo", "null", "disk"):
        assert not os.path.lexists(project / name)
    assert os.stat(project / "suid").st_mode & 0o7777 == 0o755
    assert os.readlink(project / "escape") == "../../outside/precious"  # a link, never followed
    assert len(applied["skipped"]) == 3


async def test_a_whiteout_of_a_link_removes_the_link_not_its_target(shell_lab, outside, tmp_path):
    upper = tmp_path / "layers" / "upper"
    upper.mkdir(parents=True)
    os.mknod(upper / "out", 0o600 | stat.S_IFCHR, os.makedev(0, 0))
    (shell_lab.project / "out").symlink_to(outside)
    applied = _apply(shell_lab, tmp_path / "layers")
    assert untouched(outside) and not os.path.lexists(shell_lab.project / "out")
    assert applied["files"] == [{"path": "out", "action": "deleted"}]
    shell_lab.host.changes.undo(applied["change_set"])
    assert os.readlink(shell_lab.project / "out") == str(outside) and untouched(outside)


@pytest.fixture
def shell_config() -> str:
    return "[shell]\nupper_mb = 4\n"


async def test_the_upper_layer_is_bounded(shell_lab):
    answer = await shell_lab.run("head -c 20M /dev/zero > big; echo status $?")
    assert "No space left on device" in answer["output"]
    assert os.path.getsize(shell_lab.project / "big") <= 4 * 1024 * 1024


async def test_no_network_without_the_setting(shell_lab):
    answer = await shell_lab.run("env | grep -i proxy; curl -sS --max-time 5 http://1.1.1.1/ ; "
                                 "curl -sS --max-time 5 https://pypi.org/ ; echo done")
    assert "proxy" not in answer["output"].split("done")[0].lower().replace("curl", "")
    assert answer["output"].count("curl:") == 2
    assert not [r for r in shell_lab.answers.asked if isinstance(r, NetworkRequest)]


async def test_a_projects_config_cannot_raise_the_ceiling(tmp_path, home):
    from shells import Answers

    from workbench.core.host import Host

    project = tmp_path / "project"
    (project / ".workbench").mkdir(parents=True)
    (project / ".workbench" / "config.toml").write_text(
        '[shell]\nnetwork = "all"\nnetwork_ceiling = "all"\nprograms = ["/"]\n')
    trust_project(home, project)
    answers = Answers(["once"])
    async with Host.open(cwd=project, model="echo", responder=answers) as host:
        found = host.shell.network(None)
        assert (found["level"], found["ceiling"]) == ("off", "off")
        outcome = await host.tools.call("shell", {"command": "curl -sS --max-time 5 https://pypi.org/; "
                                                 "ls /root /home /work 2>&1; true"},
                                       CallOptions(grants=GRANT))
    assert outcome.ok, outcome.error
    assert "curl:" in outcome.result["output"]
    assert not [r for r in answers.asked if isinstance(r, NetworkRequest)]
    assert outcome.result["output"].count("No such file or directory") == 3


@pytest.fixture
def network_answers() -> list[str]:
    return ["deny", "chat"]


async def test_a_host_beyond_the_chat_but_within_the_ceiling_is_asked_about(shell_lab, home):
    write_config(home.root, '[shell]\nnetwork_ceiling = "all"\n')
    shell_lab.host.workspace.config = type(shell_lab.host.config).load(home, shell_lab.project)
    shell_lab.session_id = shell_lab.host.chats.new("network")["id"]
    command = "curl -sS --max-time 10 -o /dev/null https://example.com/; echo exit $?"
    denied = await shell_lab.run(command)
    asked = [r for r in shell_lab.answers.asked if isinstance(r, NetworkRequest)]
    assert [(r.host, r.port) for r in asked] == [("example.com", 443)]
    assert "403" in denied["output"] and "exit 0" not in denied["output"]
    await shell_lab.run(command)  # answered "chat": allowed for the rest of the chat
    await shell_lab.run(command)  # not asked again
    asked = [r for r in shell_lab.answers.asked if isinstance(r, NetworkRequest)]
    assert len(asked) == 2
    internal = await shell_lab.run("curl -sS --max-time 5 http://127.0.0.1/; curl -sS --max-time 5 "
                                   "http://10.0.0.1/; echo done")
    assert len([r for r in shell_lab.answers.asked if isinstance(r, NetworkRequest)]) == 2
    assert internal["output"].count("the shell never reaches one") == 2


async def test_a_machine_that_cannot_isolate_a_command_refuses_it_saying_why(shell_lab):
    report = await shell_lab.host.sandbox.report()
    shell_lab.host.sandbox._report = {**report, "checks": [
        c if c["name"] != "shell-overlay" else {**c, "ok": False, "detail": "overlayfs refused"}
        for c in report["checks"]]}
    (shell_lab.project / "f").write_text("f\n")
    outcome = await shell_lab.outcome("echo changed > f")
    assert not outcome.ok and outcome.error["kind"] == "unavailable"
    assert "shell-overlay: overlayfs refused" in outcome.error["message"]
    assert "workbench doctor" in outcome.error["message"]
    assert (shell_lab.project / "f").read_text() == "f\n"


@pytest.mark.parametrize("where", ["home", "above home", "workbench home", "inside workbench home", "root"])
async def test_the_shell_never_runs_on_the_home_the_system_or_the_workbenchs_own_files(tmp_path, home, where):
    """A chat started in the home folder (or above it, or in the workbench's own files, or
    at /) gets no shell on it: its overlay would show ~/.ssh and let a command rewrite
    the workbench's config and grants. The call is refused before a worker starts,
    saying why, and nothing is changed there."""
    from shells import Answers

    from workbench.core.host import Host

    folder = {"home": tmp_path, "above home": tmp_path.parent, "workbench home": home.root,
              "inside workbench home": home.root / "logs", "root": Path(tmp_path.anchor)}[where]
    os.makedirs(folder, exist_ok=True)
    answers = Answers()
    async with Host.open(cwd=folder, model="echo", responder=answers) as host:
        outcome = await host.tools.call("shell", {"command": "echo pwned > planted.txt"},
                                       CallOptions(grants=GRANT))
    assert not outcome.ok and outcome.error["kind"] == "permission"
    assert "is not given to tools as a project ($project)" in outcome.error["message"]
    assert not answers.asked  # refused without a question
    assert not os.path.exists(os.path.join(folder, "planted.txt"))


async def test_a_grant_of_one_project_does_not_let_the_shell_run_on_another(shell_lab, tmp_path):
    """The shell runs on the project its call was granted: a chat whose folder is
    another one (its stored folder changed under it) is refused, nothing run there."""
    other = tmp_path / "other"
    other.mkdir()
    shell_lab.session_id = shell_lab.host.chats.new("elsewhere")["id"]
    shell_lab.host.store.set_session_folder(shell_lab.session_id, str(other))
    outcome = await shell_lab.outcome("echo pwned > planted.txt")
    assert not outcome.ok and outcome.error["kind"] == "permission"
    assert "is not the project this call was granted" in outcome.error["message"]
    assert not (other / "planted.txt").exists() and not (shell_lab.project / "planted.txt").exists()
