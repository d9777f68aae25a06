"""``workbench ext validate`` says of a folder what ``workbench ext install`` would refuse:
the real commands on hostile folders (a manifest that is not an object, names that are
not folder names, links and special files)."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from commands import workbench

from workbench.errors import ExitCode


def extension(folder: Path, name="agree", manifest=None) -> Path:
    folder.mkdir()
    data = manifest if manifest is not None else {
        "name": name, "displayName": "Agree", "description": "Checks that agree.", "entry": "main.py",
        "tools": [{"name": "t", "description": "t", "function": "t", "parameters": {"type": "object"}}]}
    (folder / "loca.json").write_text(json.dumps(data))
    (folder / "main.py").write_text("def t(args, ctx):\n    return 1\n")
    return folder


def agree(folder: Path, home) -> list[str]:
    """Validate then install ``folder``; both refuse it, naming the same problems."""
    validated = workbench("ext", "validate", str(folder))
    assert validated.returncode == ExitCode.ERROR, validated.stdout
    assert "invalid" in validated.stdout.splitlines()[-1]
    problems = [line.removeprefix("error: ") for line in validated.stdout.splitlines()
                if line.startswith("error: ")]
    assert problems and all(problem.strip() for problem in problems)
    installed = workbench("ext", "install", "--yes", str(folder))
    assert installed.returncode == ExitCode.ERROR
    for problem in problems:
        assert problem in installed.stderr, (problem, installed.stderr)
    assert sorted(p.name for p in home.extensions_dir.iterdir()) == ["builtin"]
    return problems


@pytest.mark.parametrize("data, kind", [(None, "null"), ([], "a list"), ("x", "a string"), (3, "a number")])
def test_a_manifest_that_is_not_an_object(tmp_path, home, data, kind):
    folder = extension(tmp_path / "ext", manifest={})
    (folder / "loca.json").write_text(json.dumps(data))
    assert agree(folder, home) == [f"the manifest must be a JSON object, not {kind}"]


@pytest.mark.parametrize("name", ["bad\u202etools", "bad\u200btools", "../evil", "a" * 10_000,
                                  "name\n", "a/b", ".hidden", "with space"])
def test_a_name_that_cannot_be_a_folder_name(tmp_path, home, name):
    problems = agree(extension(tmp_path / "ext", name=name), home)
    assert len(problems) == 1 and problems[0].startswith("/name: ")
    assert "is not a valid extension name" in problems[0]
    assert "\u202e" not in problems[0] and "\u200b" not in problems[0]


def test_links_and_special_files_are_each_named(tmp_path, home):
    folder = extension(tmp_path / "ext")
    (folder / "passwd").symlink_to("/etc/passwd")
    (folder / "etc").symlink_to("/etc")
    (folder / "sub").mkdir()
    (folder / "sub" / "inner").symlink_to(folder / "main.py")
    os.mkfifo(folder / "pipe")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "sock"))
    try:
        problems = agree(folder, home)
    finally:
        server.close()
    assert sorted(problems) == [
        "etc: a symbolic link; links are not accepted in extensions",
        "passwd: a symbolic link; links are not accepted in extensions",
        "pipe: a FIFO (named pipe); only plain files and folders are accepted in extensions",
        "sock: a socket; only plain files and folders are accepted in extensions",
        "sub/inner: a symbolic link; links are not accepted in extensions",
    ]


def test_a_valid_folder_is_valid_to_both(tmp_path, home):
    folder = extension(tmp_path / "ext")
    assert workbench("ext", "validate", str(folder)).returncode == 0
    installed = workbench("ext", "install", "--yes", str(folder))
    assert installed.returncode == 0, installed.stderr
    assert (home.extensions_dir / "agree" / "loca.json").is_file()
