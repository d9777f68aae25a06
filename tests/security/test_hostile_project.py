"""The chat's folder as a grant (``$project``), attacked: a path with ``..``, an absolute
path, a link inside the project that leads out, a name swapped while the call runs, and a
chat whose folder is the whole system, the home or the workbench's own files. None of
them reaches anything but the project the person granted."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest
from extension_folders import write_extension

from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.events import AskUserRequest, PermissionAnswer, PermissionRequest, RequestDenied
from workbench.tools.loader import load_extension

SECRET = "the-secret-outside-the-project"


class Person:
    """Grants for the chat, accepts each change; ``during`` runs while a form is open."""

    def __init__(self, during=None):
        self.during = during or (lambda request: None)
        self.requests = []

    async def answer(self, request):
        self.requests.append(request)
        if isinstance(request, PermissionRequest):
            return PermissionAnswer("session")
        if isinstance(request, AskUserRequest):
            self.during(request)
            return ["accept" for _ in request.questions]
        raise RequestDenied("not asked here")


@pytest.fixture
def place(tmp_path_factory):
    """A project and, beside it, an outside folder holding a secret (both under /tmp,
    outside the home)."""
    root = tmp_path_factory.mktemp("place")
    project, outside = root / "project", root / "outside"
    project.mkdir()
    outside.mkdir()
    (project / "README.md").write_text("inside\n")
    (project / "sub").mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    return project, outside


async def call(host, name, args, session=None):
    grants = host.grants.from_flags(name, [], grant_all=True)
    return await host.tools.call(name, args, CallOptions(grants=grants, prompt=False,
                                                        session_id=session))


def leaked(outcome) -> bool:
    return SECRET in json.dumps(outcome.result) or SECRET in json.dumps(outcome.error)


@pytest.fixture
async def host(place):
    async with Host.open(cwd=place[0], responder=Person()) as opened:
        yield opened


READS = [("read_file", "path"), ("list_folder", "path"), ("find_files", "path"),
         ("search_text", "path")]


def _args(name, key, value):
    return {key: value, **({"query": "secret"} if name == "search_text" else {})}


@pytest.mark.parametrize("name, key", READS)
@pytest.mark.parametrize("path", ["../outside/secret.txt", "../outside", "sub/../../outside",
                                  "OUTSIDE", "/etc"])
async def test_dotdot_and_absolute_paths_stay_in(host, place, name, key, path):
    project, outside = place
    path = str(outside) if path == "OUTSIDE" else path
    if name == "read_file" and not path.endswith(".txt") and path != "/etc":
        path += "/secret.txt"
    outcome = await call(host, name, _args(name, key, path))
    assert not outcome.ok and not leaked(outcome)
    assert outcome.error["kind"] == "permission" and "outside this project" in outcome.error["message"]
    assert "--grant read:" in outcome.error["message"]


@pytest.mark.parametrize("args", [{"path": "../outside/evil.txt", "content": "x"},
                                  {"path": "OUTSIDE/evil.txt", "content": "x"},
                                  {"path": "sub/../../outside/secret.txt", "content": "x",
                                   "overwrite": True}])
@pytest.mark.parametrize("name", ["write_file", "edit_file"])
async def test_writes_never_leave_the_project(host, place, name, args):
    project, outside = place
    args = {k: (v.replace("OUTSIDE", str(outside)) if isinstance(v, str) else v) for k, v in args.items()}
    if name == "edit_file":
        args.pop("overwrite", None)
    outcome = await call(host, name, args)
    assert not outcome.ok and "outside this project" in outcome.error["message"]
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == SECRET + "\n"


async def test_links_inside_the_project_that_lead_out_are_refused(host, place):
    project, outside = place
    (project / "link.txt").symlink_to(outside / "secret.txt")
    (project / "dir").symlink_to(outside)
    (project / "sub" / "up").symlink_to("../../outside")
    (project / "runtime.py").symlink_to(os.__file__)  # a file the sandbox itself can read
    for path in ("link.txt", "dir/secret.txt", "sub/up/secret.txt", "runtime.py"):
        outcome = await call(host, "read_file", {"path": path})
        assert not outcome.ok and not leaked(outcome), path
        assert "through the link" in outcome.error["message"], outcome.error
    listed = await call(host, "list_folder", {"path": "dir"})
    assert not listed.ok and "secret.txt" not in json.dumps(listed.error)
    found = await call(host, "find_files", {})
    assert found.ok and not any("secret" in f for f in found.result["files"])
    searched = await call(host, "search_text", {"query": "secret"})
    assert searched.ok and not leaked(searched) and searched.result["matches"] == []
    for name, args in (("write_file", {"path": "link.txt", "content": "x", "overwrite": True}),
                       ("edit_file", {"path": "link.txt", "content": "x"}),
                       ("write_file", {"path": "dir/new.txt", "content": "x"}),
                       ("edit_file", {"path": "sub/up/new.txt", "content": "x"})):
        outcome = await call(host, name, args)
        assert not outcome.ok and "outside this project" in outcome.error["message"], (name, args)
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == SECRET + "\n"


async def test_a_link_that_stays_inside_is_followed(host, place):
    project, _ = place
    (project / "sub" / "readme").symlink_to("../README.md")
    outcome = await call(host, "read_file", {"path": "sub/readme"})
    assert outcome.ok and outcome.result["content"] == "inside\n"
    assert outcome.result["path"] == str(project / "README.md")


async def test_a_file_swapped_for_a_link_while_the_change_is_reviewed(place):
    project, outside = place

    def swap(request):
        os.unlink(project / "README.md")
        (project / "README.md").symlink_to(outside / "secret.txt")

    async with Host.open(cwd=project, responder=Person(during=swap)) as host:
        outcome = await call(host, "edit_file", {"path": "README.md", "old_text": "inside",
                                                 "new_text": "written"})
    assert not outcome.ok and not leaked(outcome)
    assert (outside / "secret.txt").read_text() == SECRET + "\n"


async def test_a_folder_swapped_for_a_link_while_the_change_is_reviewed(place):
    project, outside = place
    (project / "sub" / "f.txt").write_text("f\n")
    (outside / "f.txt").write_text("outside f\n")

    def swap(request):
        shutil.rmtree(project / "sub")
        (project / "sub").symlink_to(outside)

    async with Host.open(cwd=project, responder=Person(during=swap)) as host:
        outcome = await call(host, "edit_file", {"path": "sub/f.txt", "content": "written\n"})
    assert not outcome.ok
    assert (outside / "f.txt").read_text() == "outside f\n"
    assert sorted(os.listdir(outside)) == ["f.txt", "secret.txt"]


async def test_a_folder_flipped_to_a_link_during_walks_never_shows_what_is_outside(host, place):
    project, outside = place
    flip = project / "flip"
    (outside / "more.txt").write_text(SECRET + "\n")
    stop = threading.Event()

    def flipping():
        for _ in range(200_000):  # bounded; stopped when the calls are done
            if stop.is_set():
                return
            try:
                if flip.is_symlink():
                    flip.unlink()
                    flip.mkdir()
                else:
                    flip.rmdir()
                    flip.symlink_to(outside)
            except OSError:
                pass

    flipper = threading.Thread(target=flipping, daemon=True)
    flip.mkdir()
    flipper.start()
    try:
        for _ in range(8):
            for name, args in (("search_text", {"query": "secret"}), ("find_files", {}),
                               ("read_file", {"path": "flip/more.txt"}),
                               ("list_folder", {"path": "flip"})):
                outcome = await call(host, name, args)
                assert not leaked(outcome), (name, outcome)
                if outcome.ok and name == "list_folder":
                    assert outcome.result["entries"] == []
    finally:
        stop.set()
        flipper.join(10)


def _folders(tmp_path: Path, home) -> dict[str, Path]:
    inside = home.root / "extensions"
    return {"the whole system": Path("/"), "your home folder": tmp_path,
            "holds your home folder": tmp_path.parent,
            "the workbench's own files": home.root, "inside the workbench's own files": inside}


@pytest.mark.parametrize("which", ["the whole system", "your home folder", "holds your home folder",
                                   "the workbench's own files", "inside the workbench's own files"])
async def test_a_chat_in_a_folder_that_is_not_a_project_gets_no_project(tmp_path, home, which):
    folder = _folders(tmp_path, home)[which]
    person = Person()
    async with Host.open(cwd=folder, responder=person) as host:
        session = host.chats.new()["id"]
        assert host.chats.get(session)["folder"] == str(folder)
        flags = host.grants.from_flags("read_file", [f"read:{folder}"])
        assert flags == ()
        for name, args in (("read_file", {"path": "workbench.db"}), ("list_folder", {}),
                           ("write_file", {"path": "config.toml", "content": "x", "overwrite": True}),
                           ("edit_file", {"path": "x.txt", "content": "x"})):
            for options in (CallOptions(session_id=session),
                            CallOptions(grants=(("read", str(folder)), ("write", str(folder))),
                                        prompt=False)):
                outcome = await host.tools.call(name, args, options)
                assert not outcome.ok and outcome.error["kind"] == "permission", (name, outcome)
                assert "is not given to tools as a project" in outcome.error["message"]
        assert not [r for r in person.requests if isinstance(r, PermissionRequest)]
    assert not (folder / "x.txt").exists()


async def test_another_extension_gets_nothing_from_the_builtin_answer(host, place, tmp_path):
    project, _ = place
    folder = write_extension(
        tmp_path / "hostile", "hostile",
        {"peek": {"permissions": {"read": [{"path": "$project", "reason": "Peek."}]}}},
        code="def peek(args, ctx):\n    return open('README.md').read()\n")
    assert load_extension(host.registry, folder)
    session = host.chats.new()["id"]
    assert (await host.tools.call("read_file", {"path": "README.md"}, CallOptions(session_id=session))).ok
    [asked] = [r for r in host.responder.requests if isinstance(r, PermissionRequest)]
    assert "hostile.peek" not in asked.covers
    refused = await host.tools.call("peek", {}, CallOptions(session_id=session, prompt=False))
    assert not refused.ok and refused.error["kind"] == "permission"
