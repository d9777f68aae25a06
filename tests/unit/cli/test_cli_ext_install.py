"""``workbench ext install/list/remove/update/trust/search`` as a script and a person meet them."""

from __future__ import annotations

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pexpect
import pytest

from commands import workbench

NAME = "loca-extension-foo"


def _extension(folder: Path, *, host: str = "example.com", version: str = "1.0.0") -> Path:
    folder.mkdir(parents=True)
    (folder / "loca.json").write_text(json.dumps({
        "name": NAME, "displayName": "Foo", "description": "Foo things.", "entry": "main.py",
        "tools": [{"name": "fetch_foo", "description": "Fetch foo. Use when asked for foo.",
                   "parameters": {"type": "object", "properties": {}}, "function": "fetch_foo",
                   "permissions": {"net": [{"host": host, "ports": [443],
                                            "reason": "Fetch the foo page."}]}}]}))
    (folder / "main.py").write_text("def fetch_foo(args, ctx):\n    return {}\n")
    (folder / "package.json").write_text(json.dumps({"name": NAME, "version": version}))
    return folder


def _listed() -> dict[str, dict]:
    done = workbench("ext", "list", "--json")
    assert done.returncode == 0, done.stderr
    return {entry["name"]: entry for entry in json.loads(done.stdout)}


def test_install_list_remove(tmp_path: Path) -> None:
    source = _extension(tmp_path / "foo")
    done = workbench("ext", "install", str(source), "--yes")
    assert done.returncode == 0, done.stderr
    assert "fetch_foo — Fetch foo." in done.stdout
    assert "net example.com:443: Fetch the foo page." in done.stdout
    assert "Knowledge: none" in done.stdout and "Skills: none" in done.stdout
    assert f"Installed {NAME} 1.0.0" in done.stdout

    listed = _listed()
    assert listed[NAME]["state"] == "ok" and listed[NAME]["version"] == "1.0.0"
    assert listed[NAME]["tools"] == ["fetch_foo"]
    home = Path(os.environ["WORKBENCH_HOME"])
    assert (home / "extensions" / NAME / "loca.json").is_file()

    private = home / "databases" / f"{NAME}.db"
    private.parent.mkdir(exist_ok=True)
    private.write_bytes(b"the extension's rows")

    done = workbench("ext", "remove", NAME, "--yes")
    assert done.returncode == 0, done.stderr
    assert NAME not in _listed()
    assert not (home / "extensions" / NAME).exists()
    assert not private.exists()


def test_install_without_a_terminal_needs_yes(tmp_path: Path) -> None:
    source = _extension(tmp_path / "foo")
    done = workbench("ext", "install", str(source))
    assert done.returncode == 2
    assert "error: Install loca-extension-foo needs a confirmation" in done.stderr
    assert "pass --yes" in done.stderr
    assert NAME not in _listed()
    home = Path(os.environ["WORKBENCH_HOME"])
    assert not (home / "staging").exists()


def test_install_json(tmp_path: Path) -> None:
    done = workbench("ext", "install", str(_extension(tmp_path / "foo")), "--yes", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["extension"]["name"] == NAME and data["extension"]["state"] == "ok"
    assert data["plan"]["tools"][0]["permissions"][0] == {
        "kind": "net", "value": "example.com:443", "reason": "Fetch the foo page.",
        "optional": False}


def test_held_then_trusted(tmp_path: Path) -> None:
    assert workbench("ext", "install", str(_extension(tmp_path / "foo")), "--yes").returncode == 0
    main = Path(os.environ["WORKBENCH_HOME"]) / "extensions" / NAME / "main.py"
    main.write_text(main.read_text() + "# changed\n")
    listed = _listed()[NAME]
    assert listed["state"] == "held" and listed["changed_files"] == ["main.py"]
    plain = workbench("ext", "list")
    assert f"files changed since you approved it: main.py (run `workbench ext trust {NAME}`)" \
        in plain.stdout
    assert workbench("ext", "trust", NAME).returncode == 2
    done = workbench("ext", "trust", NAME, "--yes")
    assert done.returncode == 0, done.stderr
    assert "Files changed since you approved it: main.py" in done.stdout
    assert _listed()[NAME]["state"] == "ok"


def test_update_shows_the_difference(tmp_path: Path) -> None:
    assert workbench("ext", "install", str(_extension(tmp_path / "v1")), "--yes").returncode == 0
    v2 = _extension(tmp_path / "v2", host="*", version="2.0.0")
    refused = workbench("ext", "update", NAME, "--source", str(v2))
    assert refused.returncode == 2 and _listed()[NAME]["version"] == "1.0.0"
    done = workbench("ext", "update", NAME, "--source", str(v2), "--yes")
    assert done.returncode == 0, done.stderr
    assert ("permission widened: fetch_foo: net example.com:443 -> *:443 — Fetch the foo page."
            in done.stdout)
    assert _listed()[NAME]["version"] == "2.0.0"


@pytest.mark.parametrize(("args", "code", "message"), [
    (("ext", "install", "no/such/folder", "--yes"), 2, "does not exist"),
    (("ext", "install", "npm:Not Valid", "--yes"), 2, "not a valid npm package name"),
    (("ext", "remove", "nope", "--yes"), 1, "nope is not installed"),
    (("ext", "trust", "nope", "--yes"), 1, "nope is not installed"),
    (("ext", "update", "nope", "--yes"), 1, "nope is not installed"),
    (("ext", "remove", "builtin", "--yes"), 1, "cannot be removed"),
])
def test_errors(args: tuple[str, ...], code: int, message: str) -> None:
    done = workbench(*args)
    assert done.returncode == code, (done.stdout, done.stderr)
    assert "error: " in done.stderr and message in done.stderr


def test_an_invalid_extension_names_its_errors(tmp_path: Path) -> None:
    source = _extension(tmp_path / "bad")
    data = json.loads((source / "loca.json").read_text())
    data["tools"][0]["function"] = "missing_function"
    (source / "loca.json").write_text(json.dumps(data))
    done = workbench("ext", "install", str(source), "--yes")
    assert done.returncode == 1
    assert "the extension is not valid:" in done.stderr and "/tools/0/function" in done.stderr


def test_remove_without_a_terminal_needs_yes(tmp_path: Path) -> None:
    assert workbench("ext", "install", str(_extension(tmp_path / "foo")), "--yes").returncode == 0
    done = workbench("ext", "remove", NAME)
    assert done.returncode == 2 and "--yes" in done.stderr
    assert NAME in _listed()


@pytest.mark.parametrize(("answer", "code"), [("n", 4), ("y", 0)])
def test_a_person_is_asked_on_a_terminal(answer: str, code: int, tmp_path: Path) -> None:
    source = _extension(tmp_path / "foo")
    child = pexpect.spawn(sys.executable, ["-m", "workbench", "ext", "install", str(source)],
                          env=dict(os.environ), encoding="utf-8", timeout=30)
    child.expect("Fetch the foo page.")
    child.expect(rf"Install {NAME}\? \[y/N\]")
    child.sendline(answer)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == code
    assert (NAME in _listed()) is (answer == "y")


def test_search_against_a_loopback_registry() -> None:
    answers = {"keywords:loca-extension": [{"name": "loca-extension-foo", "version": "1.2.0",
                                            "description": "Foo things."}],
               "keywords:workbench-extension": [{"name": "wb-bar", "version": "0.1.0",
                                                 "description": "Bar."}]}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            from urllib.parse import parse_qs, urlsplit

            text = parse_qs(urlsplit(self.path).query)["text"][0]
            body = json.dumps({"objects": [{"package": p} for p in answers.get(text, [])]})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        assert workbench("config", "set", "extensions.registry", url).returncode == 0
        done = workbench("ext", "search", "--json")
        assert done.returncode == 0, done.stderr
        assert [(r["name"], r["version"], r["description"]) for r in json.loads(done.stdout)] == [
            ("loca-extension-foo", "1.2.0", "Foo things."), ("wb-bar", "0.1.0", "Bar.")]
        plain = workbench("ext", "search")
        assert "loca-extension-foo  1.2.0" in plain.stdout
    finally:
        server.shutdown()
        server.server_close()


def test_search_with_an_unreachable_registry_fails_cleanly() -> None:
    assert workbench("config", "set", "extensions.registry", "http://127.0.0.1:9").returncode == 0
    done = workbench("ext", "search", "weather")
    assert done.returncode == 1 and "error: " in done.stderr
    assert "cannot reach the registry" in done.stderr
