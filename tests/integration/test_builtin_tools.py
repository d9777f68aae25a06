"""The built-in extension's tools, run as a user runs them: sandboxed, with grants."""

from __future__ import annotations

import http.server
import threading

import pytest

from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.events import (AskUserRequest, DisplayBubble, PermissionAnswer, PermissionRequest,
                              RequestDenied)


class Person:
    """A responder that answers as a person would: lasting grants for the chat, and
    each change accepted (or rejected); it keeps what it was asked."""

    def __init__(self, scope="session", verdict="accept", interactive=False, during=None):
        self.scope, self.verdict, self.interactive = scope, verdict, interactive
        self.during = during or (lambda request: None)
        self.requests = []

    async def answer(self, request):
        self.requests.append(request)
        if isinstance(request, PermissionRequest):
            return PermissionAnswer(self.scope)
        if isinstance(request, AskUserRequest):
            self.during(request)
            return [self.verdict for _ in request.questions]
        raise RequestDenied("not asked in these tests")

    def permissions(self):
        return [r for r in self.requests if isinstance(r, PermissionRequest)]

    def forms(self):
        return [r for r in self.requests if isinstance(r, AskUserRequest)]


async def call(host, name, args, grant=True):
    grants = host.grants.from_flags(name, [], grant_all=True) if grant else ()
    return await host.tools.call(name, args, CallOptions(grants=grants, prompt=False))


@pytest.fixture
def project(tmp_path_factory):
    """A project folder under /tmp outside the home (HOME is the test's own folder)."""
    folder = tmp_path_factory.mktemp("project")
    (folder / "README.md").write_text("# app\nhello\n")
    return folder


@pytest.fixture
def person():
    return Person()


@pytest.fixture
async def host(project, person):
    async with Host.open(cwd=project, responder=person) as opened:
        yield opened


async def test_the_project_outside_the_home_is_read_with_relative_paths(host, project, tmp_path):
    assert not str(project).startswith(str(tmp_path))  # outside HOME
    read = await call(host, "read_file", {"path": "README.md"})
    assert read.ok, read.error
    assert read.result["content"] == "# app\nhello\n" and read.result["path"] == str(project / "README.md")
    written = await call(host, "write_file", {"path": "notes/today.md", "content": "buy milk\ncall mum\n"})
    assert written.ok, written.error
    assert (project / "notes" / "today.md").read_text() == "buy milk\ncall mum\n"
    again = await call(host, "write_file", {"path": "notes/today.md", "content": "x"})
    assert not again.ok and "overwrite" in again.error["message"]
    (project / "notes" / "old.txt").write_text("nothing here\nMilk again\n")
    found = await call(host, "find_files", {"pattern": "*.md"})
    assert found.result["files"] == [str(project / "README.md"), str(project / "notes" / "today.md")]
    hits = await call(host, "search_text", {"path": "notes", "query": "milk"})
    assert [(h["path"].rsplit("/", 1)[1], h["line"]) for h in hits.result["matches"]] == \
        [("old.txt", 2), ("today.md", 1)]
    listed = await call(host, "list_folder", {})
    assert [(e["name"], e["kind"]) for e in listed.result["entries"]] == [("notes", "folder"),
                                                                           ("README.md", "file")]


async def test_a_grant_named_on_the_command_line_is_this_project(host, project):
    flags = host.grants.from_flags("read_file", [f"read:{project}"])
    assert flags == (("read", str(project)),)
    outcome = await host.tools.call("read_file", {"path": "README.md"}, CallOptions(grants=flags, prompt=False))
    assert outcome.ok, outcome.error
    relative = host.grants.from_flags("read_file", ["read:."])
    assert relative == flags


async def test_one_answer_covers_the_read_tools_of_the_project(host, person, project):
    session = host.chats.new()["id"]

    async def in_chat(name, args):
        return await host.tools.call(name, args, CallOptions(session_id=session))

    assert (await in_chat("read_file", {"path": "README.md"})).ok
    [asked] = person.permissions()
    assert asked.permissions[0]["shown"] == f"this project ({project})"
    assert {"builtin.list_folder", "builtin.find_files", "builtin.search_text"} <= set(asked.covers)
    for name, args in (("list_folder", {}), ("find_files", {}), ("search_text", {"query": "hello"})):
        outcome = await in_chat(name, args)
        assert outcome.ok, (name, outcome.error)
    assert len(person.permissions()) == 1
    # Writing asks once more, for writing alone, and covers the other writing tool.
    assert (await in_chat("edit_file", {"path": "README.md", "old_text": "hello", "new_text": "bye"})).ok
    writes = person.permissions()[1:]
    assert [e["kind"] for e in writes[0].permissions] == ["write"]
    assert "builtin.write_file" in writes[0].covers
    assert (await in_chat("write_file", {"path": "new.txt", "content": "n"})).ok
    assert len(person.permissions()) == 2
    # Each tool holds its own grant: revoked for one, the others keep theirs.
    explained = host.broker.explain("builtin.list_folder",
                                    host.gateway.requirements(host.registry.resolve("list_folder")), session)
    assert explained[0]["state"] == "granted"


async def test_an_answer_for_once_covers_nothing_else(project):
    person = Person(scope="once")
    async with Host.open(cwd=project, responder=person) as host:
        session = host.chats.new()["id"]
        for name in ("read_file", "list_folder"):
            outcome = await host.tools.call(name, {"path": "README.md"} if name == "read_file" else {},
                                           CallOptions(session_id=session))
            assert outcome.ok, outcome.error
        assert len(person.permissions()) == 2


async def test_without_a_grant_the_refusal_says_how_to_grant(host, project):
    refused = await call(host, "read_file", {"path": "README.md"}, grant=False)
    message = refused.error["message"]
    assert refused.error["kind"] == "permission"
    assert f"read this project ({project})" in message
    assert f"--grant read:{project}" in message and "workbench run" in message and "TUI" in message


async def test_edit_file_replaces_exactly_what_it_is_told(host, person, project):
    (project / "app.py").write_text("x = 1\ny = 1\n")
    done = await call(host, "edit_file", {"path": "app.py", "old_text": "x = 1", "new_text": "x = 2"})
    assert done.ok, done.error
    assert (project / "app.py").read_text() == "x = 2\ny = 1\n"
    assert done.result["replaced"] == 1 and "-x = 1\n+x = 2" in done.result["diff"]
    [form] = person.forms()
    assert form.questions[0]["kind"] == "diff" and form.questions[0]["title"] == "app.py"
    many = await call(host, "edit_file", {"path": "app.py", "old_text": "= ", "new_text": ":= "})
    assert not many.ok and "found 2 times" in many.error["message"] and "expected_count" in many.error["message"]
    fewer = await call(host, "edit_file", {"path": "app.py", "old_text": "= ", "new_text": "=",
                                           "expected_count": 3})
    assert not fewer.ok and "found 2 times" in fewer.error["message"] and "not 3" in fewer.error["message"]
    missing = await call(host, "edit_file", {"path": "app.py", "old_text": "z = 9", "new_text": "z"})
    assert not missing.ok and "not found" in missing.error["message"]
    assert (project / "app.py").read_text() == "x = 2\ny = 1\n"
    both = await call(host, "edit_file", {"path": "app.py", "old_text": "= ", "new_text": "=",
                                          "expected_count": 2})
    assert both.ok and (project / "app.py").read_text() == "x =2\ny =1\n"
    whole = await call(host, "edit_file", {"path": "made/new.txt", "content": "fresh\n"})
    assert whole.ok and whole.result["created"] and (project / "made" / "new.txt").read_text() == "fresh\n"


async def test_the_change_is_a_diff_bubble(host, project):
    bubbles = []
    host.bus.subscribe(lambda event: bubbles.append(event) if isinstance(event, DisplayBubble) else None)
    done = await call(host, "edit_file", {"path": "README.md", "old_text": "hello", "new_text": "bye"})
    assert done.ok, done.error
    [bubble] = bubbles
    assert bubble.display == "diff" and bubble.payload == {
        "before": "# app\nhello\n", "after": "# app\nbye\n", "title": "README.md"}


async def test_a_rejected_change_writes_nothing(project):
    person = Person(verdict="reject")
    async with Host.open(cwd=project, responder=person) as host:
        done = await call(host, "edit_file", {"path": "README.md", "old_text": "hello", "new_text": "bye"})
    assert not done.ok and "rejected" in done.error["message"]
    assert (project / "README.md").read_text() == "# app\nhello\n"


async def test_with_no_one_to_accept_it_a_change_is_refused(project):
    async with Host.open(cwd=project) as host:  # DenyAll: a script with no answers
        done = await call(host, "edit_file", {"path": "README.md", "content": "gone"})
    assert not done.ok and "tools.review_writes" in done.error["message"]
    assert (project / "README.md").read_text() == "# app\nhello\n"


async def test_an_interactive_chat_sees_the_change_without_a_question_unless_asked(project, home):
    person = Person(interactive=True)
    async with Host.open(cwd=project, responder=person) as host:
        assert (await call(host, "edit_file", {"path": "README.md", "old_text": "hello", "new_text": "hi"})).ok
        assert person.forms() == []
    home.config_file.write_text('[tools]\nreview_writes = "always"\n')
    async with Host.open(cwd=project, responder=person) as host:
        assert (await call(host, "edit_file", {"path": "README.md", "old_text": "hi", "new_text": "ho"})).ok
        assert len(person.forms()) == 1
    home.config_file.write_text('[tools]\nreview_writes = "never"\n')
    async with Host.open(cwd=project) as host:  # no one there, and no review asked for
        assert (await call(host, "edit_file", {"path": "README.md", "old_text": "ho", "new_text": "hu"})).ok
    assert (project / "README.md").read_text() == "# app\nhu\n"


@pytest.mark.parametrize("expression, value", [("12 * 7", 84), ("(1 + 2) ** 3 / 9", 3.0), ("-7 // 2", -4)])
async def test_calculate(host, expression, value):
    assert (await call(host, "calculate", {"expression": expression})).result["value"] == value


@pytest.mark.parametrize("expression", ["__import__('os')", "9 ** 99999", "open('x')"])
async def test_calculate_refuses_anything_else(host, expression):
    assert not (await call(host, "calculate", {"expression": expression})).ok


async def test_fetch_url_never_reaches_this_machine_through_its_wildcard_grant(host):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"page-of-this-machine")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        for url in (f"http://127.0.0.1:{port}/", "http://localhost/"):
            outcome = await call(host, "fetch_url", {"url": url})
            assert not outcome.ok and "page-of-this-machine" not in str(outcome.error)
            assert "workbench proxy" in outcome.error["message"], outcome.error  # refused, saying why
        scheme = await call(host, "fetch_url", {"url": "file:///etc/passwd"})
        assert "only http and https" in scheme.error["message"]
    finally:
        server.shutdown()


async def test_a_home_with_the_builtin_before_projects_upgrades_cleanly(home, project):
    """A home where the built-in of before ``$project`` (signed with the key of then) is
    installed, with a grant of that time, takes the new one at the next start."""
    from pathlib import Path

    from workbench.ext.manager import ExtensionManager
    from workbench.store import Store

    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    with Store.open(home.db_path) as store:
        before = ExtensionManager(home, store, builtin_dir=fixtures / "builtin-before-project",
                                  public_key_path=fixtures / "builtin-before-project.pub")
        assert before.ensure_builtin() is not None
        old = before.get("builtin")
        assert "edit_file" not in old.tools and old.state == "ok"
        store.add_grant("builtin.read_file", "read", str(Path.home()), "always")
    async with Host.open(cwd=project, responder=Person()) as host:
        [builtin] = [e for e in host.extensions.manager().list() if e.name == "builtin"]
        assert builtin.state == "ok" and "edit_file" in builtin.tools and builtin.digest != old.digest
        assert (home.extensions_dir / "builtin" / "main.py").read_text() == (
            Path(__file__).resolve().parents[2] / "extensions" / "builtin" / "main.py").read_text()
        read = await call(host, "read_file", {"path": "README.md"})
        assert read.ok, read.error
        edited = await call(host, "edit_file", {"path": "README.md", "old_text": "hello", "new_text": "hi"})
        assert edited.ok, edited.error
        # The grant of then names the home; it grants nothing of the project.
        refused = await call(host, "read_file", {"path": "README.md"}, grant=False)
        assert not refused.ok and refused.error["kind"] == "permission"
