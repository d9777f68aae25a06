"""What a command line loads before its work starts: the one command it names, and of the
host's side of the sandbox none of the sandbox itself.

Each check runs in a fresh interpreter (``sys.modules`` of this one holds whatever other
tests imported) and reads the modules it ended with.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from workbench.cli.register import COMMANDS, command_named

AREAS = sorted({f"workbench.cli.{module}" for module, _attr, _group in COMMANDS.values()})


def modules_after(code: str, env: dict[str, str] | None = None) -> set[str]:
    """The modules a fresh interpreter has after running ``code`` (which may exit)."""
    wrapped = ("import atexit, json, sys\n"
               "atexit.register(lambda: print('MODULES' + json.dumps(sorted(sys.modules)), file=sys.stderr))\n"
               + code)
    done = subprocess.run([sys.executable, "-c", wrapped], capture_output=True, text=True, timeout=60,
                          env=env)
    line = next(line for line in done.stderr.splitlines() if line.startswith("MODULES"))
    return set(json.loads(line[len("MODULES"):]))


@pytest.mark.parametrize(("args", "named"), [
    (["call", "word_count"], "call"),
    (["--model", "echo", "sessions", "list"], "sessions"),
    (["--model=echo", "runs"], "runs"),
    (["trust", "."], "trust"),
    ([], ""),
    (["--model", "echo"], ""),
    (["--version"], ""),
    (["--help"], None),
    (["call", "--help"], "call"),
    (["nosuch"], None),
])
def test_the_command_a_line_names(args: list[str], named: str | None) -> None:
    assert command_named(args) == named


def test_version_loads_no_command_and_no_core(tmp_path) -> None:
    loaded = modules_after("from workbench.cli.app import main\nmain(['--version'])\n")
    assert not loaded & set(AREAS)
    assert "workbench.core.host" not in loaded and "pydantic" not in loaded


def test_call_loads_its_own_command_alone(tmp_path) -> None:
    loaded = modules_after("from workbench.cli.app import main\nmain(['call', '--help'])\n")
    assert set(AREAS) & loaded == {"workbench.cli.call"}


def test_a_plain_call_line_runs_without_typer(home) -> None:
    """``workbench call TOOL --args … --json`` is read by hand: neither typer nor click
    is imported, and the call is made (``cli/calling.py``)."""
    loaded = modules_after("import sys\nsys.argv = ['workbench', 'call', 'word_count', '--args', "
                           "'{\"text\": \"a b\"}', '--json']\n"
                           "from workbench.__main__ import main\nmain()\n")
    assert "workbench.core.host" in loaded and "workbench.sandbox.zygote" not in loaded
    assert not {"typer", "click", "workbench.cli.app", "workbench.cli.call"} & loaded


def test_help_still_lists_every_command_in_order(tmp_path) -> None:
    done = subprocess.run([sys.executable, "-m", "workbench", "--help"], capture_output=True,
                          text=True, timeout=60, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    listed = [line.split()[1] for line in done.stdout.splitlines()
              if line.startswith("│ ") and len(line.split()) > 1 and line.split()[1] in COMMANDS]
    commands = [name for name, (_m, _a, group) in COMMANDS.items() if not group]
    groups = [name for name, (_m, _a, group) in COMMANDS.items() if group]
    assert listed == commands + groups


def test_one_command_then_another_in_one_process(tmp_path) -> None:
    """The app is one object: a second command line in the same process (the tests'
    in-process runs) still finds its command, and help then lists them all."""
    from typer import Typer

    from workbench.cli import register

    app = Typer()
    register.for_arguments(app, ["call"])
    register.for_arguments(app, ["sessions", "list"])
    register.for_arguments(app, ["--help"])
    names = [c.name for c in app.registered_commands] + [g.name for g in app.registered_groups]
    assert sorted(names) == sorted(COMMANDS) and len(names) == len(COMMANDS)


def test_the_host_side_of_the_sandbox_loads_no_landlock_or_seccomp() -> None:
    loaded = modules_after("import workbench.sandbox.client, workbench.sandbox.worker_host\n")
    assert not {"workbench.sandbox.landlock", "workbench.sandbox.seccomp", "workbench.sandbox.mounts",
                "workbench.sandbox.zygote", "ctypes"} & loaded
