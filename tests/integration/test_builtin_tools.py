"""The built-in extension's tools, run as a user runs them: sandboxed, with grants."""

from __future__ import annotations

import http.server
import threading

import pytest

from workbench.core.gateway import CallOptions
from workbench.core.host import Host


async def call(host, name, args, grant=True):
    grants = host.grants.from_flags(name, [], grant_all=True) if grant else ()
    return await host.tools.call(name, args, CallOptions(grants=grants, prompt=False))


@pytest.fixture
async def host(workdir):
    async with Host.open(cwd=workdir) as opened:
        yield opened


async def test_write_then_read_find_and_search(host, tmp_path):
    notes = tmp_path / "notes"
    written = await call(host, "write_file", {"path": "~/notes/today.md", "content": "buy milk\ncall mum\n"})
    assert written.ok, written.error
    assert (notes / "today.md").read_text() == "buy milk\ncall mum\n"
    again = await call(host, "write_file", {"path": str(notes / "today.md"), "content": "x"})
    assert not again.ok and "overwrite" in again.error["message"]
    (notes / "old.txt").write_text("nothing here\nMilk again\n")
    read = await call(host, "read_file", {"path": "~/notes/today.md"})
    assert read.result["content"] == "buy milk\ncall mum\n"
    found = await call(host, "find_files", {"path": str(notes), "pattern": "*.md"})
    assert found.result["files"] == [str(notes / "today.md")]
    hits = await call(host, "search_text", {"path": str(notes), "query": "milk"})
    assert [(h["path"].rsplit("/", 1)[1], h["line"]) for h in hits.result["matches"]] == \
        [("old.txt", 2), ("today.md", 1)]


async def test_files_outside_the_home_stay_out_of_reach(host, tmp_path):
    outside = "/etc/hostname"
    assert (await call(host, "read_file", {"path": outside})).error["kind"] == "permission"
    wrote = await call(host, "write_file", {"path": "/tmp/workbench-builtin-escape.txt", "content": "x"})
    assert wrote.error["kind"] == "permission"


async def test_nothing_without_grants(host):
    refused = await call(host, "write_file", {"path": "~/x.txt", "content": "x"}, grant=False)
    assert refused.error["kind"] == "permission" and "Save the files you ask for" in refused.error["message"]


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
