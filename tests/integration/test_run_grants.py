"""``run`` grants for real tools, through the real host and its sandboxed workers
(Python and Deno): a tool that lists the opener of three systems runs the one this
system has (a ``#!`` script, with its interpreter) by its name, a tool runs the real
``git``, and neither can run the interpreter or anything else on its own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from commands import workbench

from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.events import PermissionAnswer, PermissionRequest

OPENERS = [{"binary": "open", "reason": "Open the link on macOS."},
           {"binary": "xdg-open", "reason": "Open the link on Linux."},
           {"binary": "rundll32", "reason": "Open the link on Windows."}]

# The opener a Linux desktop has, in miniature: a shell script that says what it opened.
XDG_OPEN = "#!/bin/sh\nprintf 'opened %s\\n' \"$1\"\n"

PY_ENTRY = '''
import subprocess, sys

def open_link(args, ctx):
    opener = {"darwin": "open", "win32": "rundll32"}.get(sys.platform, "xdg-open")
    done = subprocess.run([opener, args["url"]], capture_output=True, text=True)
    return {"out": done.stdout, "code": done.returncode}

def git_log(args, ctx):
    done = subprocess.run(["git", "-C", args["repo"], "log", "-1", "--format=%s"],
                          capture_output=True, text=True)
    return {"out": done.stdout, "err": done.stderr, "code": done.returncode}

def shell(args, ctx):
    try:
        done = subprocess.run(args["argv"], capture_output=True, text=True)
    except OSError as exc:
        return {"refused": type(exc).__name__}
    return {"out": done.stdout, "err": done.stderr, "code": done.returncode}
'''

TS_ENTRY = '''
async function run(argv: string[]) {
  try {
    const done = await new Deno.Command(argv[0], { args: argv.slice(1) }).output();
    return { out: new TextDecoder().decode(done.stdout), err: new TextDecoder().decode(done.stderr),
             code: done.code };
  } catch (error) {
    return { refused: (error as Error).name };
  }
}

export async function openLink(args: { url: string }) {
  const opener = Deno.build.os === "darwin" ? "open" : Deno.build.os === "windows" ? "rundll32" : "xdg-open";
  return await run([opener, args.url]);
}

export async function gitLog(args: { repo: string }) {
  return await run(["git", "-C", args.repo, "log", "-1", "--format=%s"]);
}

export async function shell(args: { argv: string[] }) {
  return await run(args.argv);
}
'''


def tool(name: str, function: str, permissions: dict) -> dict:
    return {"name": name, "description": f"{name}. Use when testing run grants.",
            "parameters": {"type": "object"}, "function": function, "permissions": permissions}


def extension(folder: Path, runtime: str, repo: Path) -> Path:
    folder.mkdir(parents=True)
    camel = runtime == "deno"
    read_repo = {"path": str(repo), "reason": "Read the repository's history."}
    manifest = {
        "name": f"runner-{runtime}", "displayName": "Runner", "description": "Runs programs.",
        "tools": [
            tool("open_link", "openLink" if camel else "open_link", {"run": OPENERS}),
            tool("git_log", "gitLog" if camel else "git_log",
                 {"run": [{"binary": "git", "reason": "Read the history."}], "read": [read_repo]}),
            tool("shell", "shell", {"run": [{"binary": "xdg-open", "reason": "Open links."}]}),
        ]}
    (folder / "loca.json").write_text(json.dumps(manifest, indent=2))
    if camel:
        (folder / "deno.json").write_text(json.dumps({"exports": "./src/mod.ts"}))
        (folder / "src").mkdir()
        (folder / "src" / "mod.ts").write_text(TS_ENTRY)
    else:
        (folder / "main.py").write_text(PY_ENTRY)
    return folder


class Person:
    def __init__(self) -> None:
        self.asked: list[PermissionRequest] = []

    async def answer(self, request):
        assert isinstance(request, PermissionRequest)
        self.asked.append(request)
        return PermissionAnswer("always")


@pytest.fixture
def system(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """A PATH of two folders: one with the xdg-open script, one with git (by a link);
    no `open`, no `rundll32`. And a git repository with one commit."""
    bin_dir, git_dir = tmp_path / "bin", tmp_path / "gitbin"
    bin_dir.mkdir()
    git_dir.mkdir()
    (bin_dir / "xdg-open").write_text(XDG_OPEN)
    (bin_dir / "xdg-open").chmod(0o755)
    real_git = shutil.which("git")
    assert real_git, "git is part of the development setup"
    (git_dir / "git").symlink_to(real_git)
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com",
           "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@example.com"}
    for argv in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "Plant the ferns"]):
        subprocess.run([real_git, "-C", str(repo), *argv], check=True, env=env)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{git_dir}")
    return {"bin": bin_dir, "repo": repo}


def install(folder: Path) -> subprocess.CompletedProcess:
    done = workbench("ext", "install", str(folder), "--yes")
    assert done.returncode == 0, done.stderr
    return done


def explain(tool: str) -> subprocess.CompletedProcess:
    return workbench("grants", "explain", tool)


@pytest.mark.parametrize("runtime", ["python", "deno"])
async def test_alternatives_for_three_systems_run_the_one_here(runtime, system, tmp_path):
    installed = install(extension(tmp_path / "ext", runtime, system["repo"]))
    assert "run open (not on this system: skipped)" in installed.stdout
    assert "run rundll32 (not on this system: skipped)" in installed.stdout
    assert "run xdg-open: Open the link on Linux." in installed.stdout

    person = Person()
    with Host.open(cwd=tmp_path / "work", responder=person) as host:
        outcome = await host.tools.call("open_link", {"url": "https://example.com/fern"},
                                       CallOptions(prompt=True))
        assert outcome.ok, outcome.error
        assert outcome.result["out"] == "opened https://example.com/fern\n"
        assert outcome.result["code"] == 0
        [request] = person.asked
        assert [(p["kind"], p["value"]) for p in request.permissions] == [("run", "xdg-open")]
        rows = {row["value"]: row["state"] for row in host.grants.explain("open_link")}
        assert rows == {"open": "not applicable", "xdg-open": "granted", "rundll32": "not applicable"}
    shown = explain("open_link").stdout
    assert "not applicable run open (not on this system: skipped)" in shown
    assert "granted      run xdg-open by grant" in shown


@pytest.mark.parametrize("runtime", ["python", "deno"])
async def test_a_tool_runs_real_git_by_its_name(runtime, system, tmp_path):
    install(extension(tmp_path / "ext", runtime, system["repo"]))
    with Host.open(cwd=tmp_path / "work", responder=Person()) as host:
        outcome = await host.tools.call("git_log", {"repo": str(system["repo"])},
                                       CallOptions(prompt=True))
    assert outcome.ok, outcome.error
    assert outcome.result["code"] == 0, outcome.result
    assert outcome.result["out"] == "Plant the ferns\n"


@pytest.mark.parametrize("runtime", ["python", "deno"])
async def test_the_scripts_interpreter_and_other_programs_stay_out_of_reach(runtime, system,
                                                                            tmp_path):
    """Granted xdg-open (a /bin/sh script): its interpreter starts it, but the tool cannot
    use the shell (or anything else) to read what it was not granted."""
    secret = tmp_path / "secret.txt"
    secret.write_text("the combination")
    install(extension(tmp_path / "ext", runtime, system["repo"]))
    with Host.open(cwd=tmp_path / "work", responder=Person()) as host:
        async def shell(argv):
            # Its own tool named shell: the first-party shell takes the plain name.
            outcome = await host.tools.call(f"runner-{runtime}.shell", {"argv": argv},
                                           CallOptions(prompt=True))
            assert outcome.ok, outcome.error
            return outcome.result

        assert (await shell(["xdg-open", "x"]))["out"] == "opened x\n"
        for argv in (["sh", "-c", "echo hi"], ["git", "--version"], ["/usr/bin/cat", str(secret)]):
            result = await shell(argv)  # not granted: not found, or refused
            assert "refused" in result or result["code"] != 0, (argv, result)
            assert "hi" not in result.get("out", "") and "git version" not in result.get("out", "")
        attempt = await shell(["/bin/sh", "-c", f"read line < {secret}; echo \"got $line\""])
        assert "the combination" not in json.dumps(attempt)
        if runtime == "deno":  # --allow-run names xdg-open alone, not its interpreter
            assert attempt == {"refused": "NotCapable"}, attempt
        else:  # the interpreter may start (the kernel needs it) but reads nothing more
            # refused by Landlock, or absent from the worker's private root
            assert ("Permission denied" in attempt["err"] or "No such file" in attempt["err"]) \
                and attempt["out"] == "got \n", attempt


HOSTILE_PY = '''
import os, subprocess

def plant(args, ctx):
    # The binary the manifest lists was not there when the call was settled: make it now.
    path = args["path"]
    with open(path, "w") as handle:
        handle.write("#!/bin/sh\\necho escaped\\n")
    os.chmod(path, 0o755)
    try:
        done = subprocess.run([path], capture_output=True, text=True)
    except OSError as exc:
        return {"refused": type(exc).__name__}
    return {"out": done.stdout, "code": done.returncode}
'''


async def test_a_binary_made_after_the_call_was_settled_is_not_granted(system, tmp_path):
    """An entry skipped as not on this system grants nothing: a tool that creates that
    binary during its call (in a folder it may write) cannot run it."""
    drop = tmp_path / "drop"
    drop.mkdir()
    planted = drop / "helper"
    folder = tmp_path / "hostile"
    folder.mkdir()
    (folder / "loca.json").write_text(json.dumps({
        "name": "hostile", "displayName": "Hostile", "description": "Plants a helper.",
        "tools": [tool("plant", "plant", {
            "run": [{"binary": str(planted), "reason": "Run the helper."}],
            "write": [{"path": str(drop), "reason": "Keep the helper."}]})]}))
    (folder / "main.py").write_text(HOSTILE_PY)
    install(folder)
    person = Person()
    with Host.open(cwd=tmp_path / "work", responder=person) as host:
        outcome = await host.tools.call("plant", {"path": str(planted)}, CallOptions(prompt=True))
        assert outcome.ok, outcome.error
        assert "escaped" not in json.dumps(outcome.result)
        assert outcome.result.get("refused") == "PermissionError" or outcome.result["code"] != 0
        [request] = person.asked
        assert [p["kind"] for p in request.permissions] == ["write"]
        # Now that it exists, the next call asks for it by name: nothing is granted silently.
        assert {row["value"]: row["state"] for row in host.grants.explain("plant")}[
            str(planted)] == "not granted"
