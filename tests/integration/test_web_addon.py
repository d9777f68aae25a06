"""The Web add-on as a person meets it: its code and manifest installed as
``web-standin`` with its network grants pointed at a loopback stand-in (the only changes
made to its manifest: the id ``web`` is the shipped add-on's alone), called with
``workbench call`` and ``workbench run`` in sandboxed workers through the proxy; and the
shipped add-on itself, installed by its id, in a chat's Tools menu.

The stand-in speaks each provider's documented wire shape: Brave Search
(``GET /res/v1/web/search``, ``X-Subscription-Token``, ``{"web": {"results": [...]}}``),
Tavily (``POST /search``, ``Authorization: Bearer``, ``{"results": [...]}``, 432 when the
plan's quota is spent) and Google Programmable Search (``GET /customsearch/v1``,
``X-goog-api-key``, ``{"items": [...]}``, 429 ``RESOURCE_EXHAUSTED``). It refuses a
wrong key as the services do. A hostile one echoes the key everywhere it can; the key
appears in no output, event, error or file of the home.
"""

from __future__ import annotations

import http.server
import json
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from commands import workbench
from pdf_samples import pdf_file

ADDON = Path(__file__).resolve().parents[2] / "extensions" / "web"
KEYS = {"brave": "BSA-brave-secret-0123456789", "tavily": "tvly-tavily-secret-0123456789",
        "google": "AIza-google-secret-0123456789"}


class Providers(http.server.ThreadingHTTPServer):
    """The three services on one loopback port; ``mode[name]`` says how each answers
    (``ok``, ``quota``, ``echo``: its key put in its error and results)."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.mode = {"brave": "ok", "tavily": "ok", "google": "ok"}
        self.seen: list[tuple[str, str]] = []
        self.port = self.server_address[1]


class Handler(http.server.BaseHTTPRequestHandler):
    server: Providers

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _answer(self, name: str, key: str | None, query: str) -> None:
        self.server.seen.append((name, query))
        mode = self.server.mode[name]
        if key != KEYS[name]:
            return self._send(401, {"error": "invalid key"})
        if mode == "quota":
            return self._send(*QUOTA[name])
        if mode == "garbage":
            return self._raw(200, "text/html", b"<html>Service unavailable</html>")
        if mode == "shape":
            return self._send(200, {"unexpected": True})
        echo = f" {key}" if mode == "echo" else "\x1b]0;owned\x07\x1b[2J\x1b[31m" if mode == "ansi" else ""
        if mode == "echo" and name == "brave":
            return self._send(403, {"error": {"detail": f"token {key} is not allowed", "code": "x"}})
        hits = [{"title": f"{name} on {query}{echo}", "address": f"https://{name}.example/{query}",
                 "snippet": f"About {query}{echo}"}]
        if name == "brave":
            self._send(200, {"type": "search", "web": {"type": "search", "results": [
                {"title": h["title"], "url": h["address"], "description": h["snippet"]} for h in hits]}})
        elif name == "tavily":
            self._send(200, {"query": query, "results": [
                {"title": h["title"], "url": h["address"], "content": h["snippet"], "score": 0.9}
                for h in hits], "response_time": 0.5})
        else:
            self._send(200, {"kind": "customsearch#search", "items": [
                {"kind": "customsearch#result", "title": h["title"], "link": h["address"],
                 "snippet": h["snippet"]} for h in hits]})

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if url.path == "/res/v1/web/search":
            self._answer("brave", self.headers.get("X-Subscription-Token"), query["q"][0])
        elif url.path == "/customsearch/v1":
            if query.get("cx") != ["engine-1"]:
                return self._send(400, {"error": {"code": 400, "message": "Invalid cx"}})
            self._answer("google", self.headers.get("X-goog-api-key"), query["q"][0])
        elif url.path == "/page":
            body = (b"<html><head><title>Rain</title><style>p{}</style></head><body>"
                    b"<nav><a href='/home'>Home</a> Menu</nav><main><h1>Rain today</h1>"
                    b"<p>Showers all day, see <a href='/radar'>the radar</a>.</p>" + b"<p>More.</p>" * 60
                    + b"</main><footer>Footer text</footer></body></html>")
            self._raw(200, "text/html; charset=utf-8", body)
        elif url.path == "/paper.pdf":
            self._raw(200, "application/pdf", PDF)
        elif url.path == "/huge":
            self._raw(200, "text/plain", b"x" * (6 << 20))
        else:
            self._send(404, {"error": "no such route"})

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        auth = self.headers.get("Authorization") or ""
        if urlsplit(self.path).path == "/search":
            self._answer("tavily", auth.removeprefix("Bearer "), body["query"])
        else:
            self._send(404, {"error": "no such route"})

    def _raw(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


QUOTA = {"brave": (429, {"type": "ErrorResponse", "error": {"code": "RATE_LIMITED", "status": 429,
                                                             "detail": "Request rate limit exceeded"}}),
         "tavily": (432, {"detail": {"error": "This request exceeds your plan's set usage limit."}}),
         "google": (429, {"error": {"code": 429, "message": "Quota exceeded for quota metric 'Queries'",
                                    "status": "RESOURCE_EXHAUSTED"}})}


def _pdf() -> bytes:
    stream = b"BT /F1 18 Tf 72 720 Td (Findings of the paper) Tj ET"
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    return pdf_file(objects)


PDF = _pdf()


@dataclass
class Standin:
    """The stand-in and the home the add-on's copy is installed in, once per module."""

    server: Providers
    root: Path
    """The person's home folder (``HOME``): the settings file is under it."""
    base: str

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def settings(self) -> Path:
        return self.root / ".config" / "workbench" / "web.toml"


@pytest.fixture(scope="module")
def standin(tmp_path_factory) -> Iterator[Standin]:
    """The add-on's copy installed, its hosts pointed at the stand-in; and the shipped
    add-on itself."""
    server = Providers()
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    root = tmp_path_factory.mktemp("web-person")
    folder = root / "web-src"
    shutil.copytree(ADDON, folder)
    manifest = json.loads((folder / "loca.json").read_text())
    manifest["name"] = "web-standin"
    for tool in manifest["tools"]:
        for grant in tool["permissions"]["net"]:
            grant["host"], grant["ports"] = "127.0.0.1", [server.port]
    (folder / "loca.json").write_text(json.dumps(manifest))
    for source in (str(folder), "web"):  # the copy, and the shipped add-on by its id
        installed = workbench("ext", "install", source, "--yes",
                              env={"WORKBENCH_HOME": str(root / "home"), "HOME": str(root)})
        assert installed.returncode == 0, installed.stderr
    try:
        yield Standin(server, root, f"http://127.0.0.1:{server.port}")
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def web(standin, monkeypatch) -> Standin:
    """The person's settings file naming the stand-in's addresses with the Brave and
    Google keys (Tavily's comes from the environment); every provider answering."""
    monkeypatch.setenv("WORKBENCH_HOME", str(standin.home))
    monkeypatch.setenv("HOME", str(standin.root))
    monkeypatch.setenv("TAVILY_API_KEY", KEYS["tavily"])
    monkeypatch.delenv("WORKBENCH_WEB_PROVIDERS", raising=False)
    standin.server.mode.update(brave="ok", tavily="ok", google="ok")
    standin.server.seen.clear()
    base = standin.base
    standin.settings.parent.mkdir(parents=True, exist_ok=True)
    standin.settings.write_text(f'providers = ["brave", "tavily", "google"]\n'
                                f'[brave]\nkey = "{KEYS["brave"]}"\nendpoint = "{base}/res/v1/web/search"\n'
                                f'[tavily]\nendpoint = "{base}/search"\n'
                                f'[google]\nkey = "{KEYS["google"]}"\ncx = "engine-1"\n'
                                f'endpoint = "{base}/customsearch/v1"\n')
    return standin


def search(query: str, *extra: str):
    done = workbench("call", "web_search", "--grant-all", "--jsonl", "-a",
                     json.dumps({"query": query}), *extra, tracebacks=True)
    assert "Traceback" not in done.stderr  # the call's log holds the worker's, at debug
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    return done, outcome


def test_providers_are_tried_in_the_persons_order_until_one_answers(web, monkeypatch):
    providers = web.server
    done, outcome = search("rain")
    assert outcome["ok"], done.stdout + done.stderr
    assert outcome["result"]["provider"] == "brave" and outcome["result"]["served_by"] == "Brave Search"
    assert outcome["result"]["results"] == [{"title": "brave on rain", "url": "https://brave.example/rain",
                                             "snippet": "About rain"}]

    providers.mode["brave"] = "quota"
    done, outcome = search("snow")
    assert outcome["result"]["provider"] == "tavily", outcome
    [brave] = outcome["result"]["tried"]
    assert brave["provider"] == "brave" and brave["failed"].startswith("out of quota or rate limited (HTTP 429)")
    assert "trying the next provider" in done.stdout  # the call's log says it went on

    providers.mode["tavily"] = "quota"
    done, outcome = search("hail")
    assert outcome["result"]["provider"] == "google" and outcome["result"]["served_by"] == "Google Programmable Search"
    assert [t["provider"] for t in outcome["result"]["tried"]] == ["brave", "tavily"]
    assert "out of the plan's quota (HTTP 432)" in outcome["result"]["tried"][1]["failed"]

    monkeypatch.setenv("WORKBENCH_WEB_PROVIDERS", "google,brave")
    providers.mode.update(brave="ok", tavily="ok")
    done, outcome = search("fog")
    assert outcome["result"]["provider"] == "google" and outcome["result"]["tried"] == []

    providers.mode.update(google="quota", brave="quota")
    done, outcome = search("wind")
    assert not outcome["ok"] and done.returncode != 0
    message = outcome["error"]["message"]
    assert message.startswith("SearchFailed: no search provider answered (google: out of quota")
    assert "brave: out of quota or rate limited (HTTP 429)" in message and "Traceback" not in done.stderr
    assert [name for name, _ in providers.seen] == ["brave", "brave", "tavily", "brave", "tavily", "google",
                                                     "google", "google", "brave"]

    # An answer that is not JSON, or JSON of another shape, is a failure too.
    monkeypatch.setenv("WORKBENCH_WEB_PROVIDERS", "tavily,google,brave")
    providers.mode.update(tavily="garbage", google="shape", brave="ok")
    done, outcome = search("mist")
    assert outcome["result"]["provider"] == "brave", outcome
    assert [t["failed"] for t in outcome["result"]["tried"]] == [
        "answered something that is not JSON", "answered JSON of another shape (no items)"]

    monkeypatch.delenv("TAVILY_API_KEY")
    monkeypatch.setenv("WORKBENCH_WEB_PROVIDERS", "tavily,nosuch")
    done, outcome = search("calm")
    assert "tavily: no key (set TAVILY_API_KEY" in outcome["error"]["message"]
    assert "unknown providers nosuch were left out" in outcome["error"]["message"]


def test_a_key_never_leaves_the_add_on(web, monkeypatch):
    """Hostile: a provider echoes the key in its error and in its results; no output,
    event, error, status, call record or log of the home holds it."""
    providers = web.server
    providers.mode.update(brave="echo", tavily="echo")
    done, outcome = search("leak")
    assert outcome["result"]["provider"] == "tavily"
    assert "[key hidden]" in outcome["result"]["tried"][0]["failed"]
    assert outcome["result"]["results"][0]["title"] == "tavily on leak [key hidden]"
    monkeypatch.setenv("WORKBENCH_WEB_PROVIDERS", "brave")
    refused, failed = search("leak")
    assert not failed["ok"] and "[key hidden]" in failed["error"]["message"]
    # A settings file that is not TOML: the note names the place, never the text.
    web.settings.write_text(web.settings.read_text().replace('key = "BSA', 'key = BSA'))
    broken, unread = search("leak")
    assert "is not valid TOML (at line 3, column 7); it was ignored" in unread["error"]["message"]
    status = workbench("ext", "status", "web-standin")
    explained = workbench("grants", "explain", "web_search")
    written = b"".join(p.read_bytes() for p in web.home.rglob("*") if p.is_file())
    for key in KEYS.values():
        for text in (done.stdout, done.stderr, refused.stdout, refused.stderr, broken.stdout, status.stdout,
                     status.stderr, explained.stdout, explained.stderr):
            assert key not in text
        assert key.encode() not in written


def test_web_fetch_returns_the_main_text_with_links_and_a_pdfs_text(web):
    base = web.base
    page = workbench("call", "web_fetch", "--grant-all", "--json", "-a", json.dumps({"url": f"{base}/page"}))
    result = json.loads(page.stdout)["result"]
    assert result["kind"] == "html" and result["title"] == "Rain"
    assert result["text"].startswith(f"# Rain today\n\nShowers all day, see [the radar]({base}/radar).")
    assert "Menu" not in result["text"] and "Footer" not in result["text"] and "p{}" not in result["text"]
    short = workbench("call", "web_fetch", "--grant-all", "--json", "-a",
                      json.dumps({"url": f"{base}/page", "max_chars": 20}))
    cut = json.loads(short.stdout)["result"]
    assert cut["text"] == "# Rain today\n\nShower" and cut["note"] == "only the first 20 characters are shown"
    paper = workbench("call", "web_fetch", "--grant-all", "--json", "-a", json.dumps({"url": f"{base}/paper.pdf"}))
    result = json.loads(paper.stdout)["result"]
    assert result["kind"] == "pdf" and result["text"] == "## Page 1\nFindings of the paper"
    huge = workbench("call", "web_fetch", "--grant-all", "--json", "-a", json.dumps({"url": f"{base}/huge"}))
    result = json.loads(huge.stdout)["result"]
    assert len(result["text"]) == 100_000 and result["truncated"]
    assert result["note"] == ("only the first 5242880 bytes were fetched; only the first 100000 "
                              "characters are shown")
    elsewhere = workbench("call", "web_fetch", "--grant-all", "--json", "-a",
                          json.dumps({"url": "http://localhost:9/"}))
    assert not json.loads(elsewhere.stdout)["ok"]  # only the granted address, by the proxy


async def test_the_tools_menu_switches_the_add_on_apart_from_the_built_in_tools(web, workdir):
    """Each add-on is a row of its own in a chat's Tools menu, off until the person
    switches it on there; while on, its tools are offered in place of the built-in
    ``web_search`` and ``fetch_url`` (a third-party copy's ``replaces`` hides nothing);
    the built-in row switches only the built-in tools, the add-on's row only its own."""
    from workbench.core.host import Host

    search, fetch = "web.addon__web__web_search", "web.addon__web__web_fetch"
    async with Host.open(cwd=workdir) as host:
        chat = host.chats.new()["id"]
        rows = {row.name: row for row in host.switches.rows(chat)}
        assert rows["web"].kind == "extension" and rows["web"].tools == 2 and not rows["web"].on
        assert rows["builtin"].on and rows["web-standin"].on

        def offered() -> set[str]:
            return {tool.qualified_name for tool in host.switches.tools(chat)}

        # Off by default; the third-party copy declares the same "replaces", to no effect.
        assert "builtin.fetch_url" in offered() and not {search, fetch} & offered()
        assert "web-standin.web_fetch" in offered()
        refused = await host.chats.call_for_model(chat, "addon__web__web_fetch", {"url": "http://127.0.0.1:9/"})
        assert not refused.ok and "switched off in this chat" in refused.error["message"]

        host.switches.set_extension(chat, "web", True)
        assert {search, fetch} <= offered() and "builtin.fetch_url" not in offered()
        assert "workbench.web_search" not in offered()
        tools = {row.qualified_name: row for row in host.switches.tool_rows(chat)}
        assert tools[fetch].replaces == ("fetch_url",)
        assert tools["builtin.fetch_url"].replaced_by == "addon__web__web_fetch"
        assert not tools["builtin.fetch_url"].offered
        replaced = await host.chats.call_for_model(chat, "fetch_url", {"url": "http://127.0.0.1:9/"})
        assert not replaced.ok and "replaced by 'addon__web__web_fetch'" in replaced.error["message"]

        host.switches.set_extension(chat, "builtin", False)
        assert {search, fetch} <= offered() and "builtin.read_file" not in offered()
        host.switches.set_extension(chat, "builtin", True)
        host.switches.set_extension(chat, "web", False)
        assert "builtin.fetch_url" in offered() and not {search, fetch} & offered()
        assert not {row.name: row for row in host.switches.rows(chat)}["web"].on


def test_a_chat_searches_the_web_with_a_model_that_calls_the_tool(web, workdir):
    providers = web.server
    (workdir / "model.json").write_text(json.dumps([
        {"tool_calls": [{"name": "web_search", "arguments": {"query": "rain in Lisbon", "limit": 3}}]},
        {"text": "Tavily answered."}]))
    providers.mode["brave"] = "quota"
    done = workbench("run", "--jsonl", "--model", "scripted:model.json", "-g", "net", "-g", "read", "-g", "env",
                     "search the web for rain in Lisbon", tracebacks=True)
    assert done.returncode == 0, done.stdout + done.stderr
    [ended] = [json.loads(line) for line in done.stdout.splitlines() if '"tool_call_ended"' in line]
    assert ended["tool"] == "web-standin.web_search" and ended["result"]["served_by"] == "Tavily"
    assert ended["result"]["results"][0]["title"] == "tavily on rain in Lisbon"
    assert providers.seen == [("brave", "rain in Lisbon"), ("tavily", "rain in Lisbon")]

    # Hostile: results carrying terminal escapes reach the terminal as visible text.
    providers.mode["tavily"] = "ansi"
    shown = workbench("call", "web_search", "--grant-all", "-a", json.dumps({"query": "rain in Lisbon"}))
    assert shown.returncode == 0 and "tavily on rain in Lisbon" in shown.stdout + shown.stderr
    assert "\x1b" not in shown.stdout + shown.stderr and "\x07" not in shown.stdout + shown.stderr
