"""Extensions with dependencies, installed and then called in the sandbox, with no network.

A Deno extension imports an npm package through its ``deno.json`` ``imports`` (and
another through a ``package.json``), a Python extension a package from its
``requirements.txt``. The packages come from a registry on loopback that serves real
npm packuments and tarballs made here, and from a folder of wheels made here; one
test of each kind reaches the real npm registry and PyPI. The sandboxed worker has
a network namespace of its own, so its package must come from what the install
cached: the tool's result proves it was imported from there.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import extension_folders

from workbench.config.home import Home
from workbench.core.host import Host
from workbench.ext.dependencies import DependencyError
from workbench.ext.manager import ExtensionManager
from workbench.ext.plan import InstallPlan
from workbench.store import Store


# --- a registry on loopback and wheels made here --------------------------------------


def npm_tarball(name: str, version: str, files: dict[str, str]) -> bytes:
    """A package tarball as ``npm pack`` makes it: everything under ``package/``."""
    members = {"package.json": json.dumps({"name": name, "version": version, "main": "index.js"}),
               **files}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for relative, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(f"package/{relative}")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class NpmRegistry:
    """A tiny npm registry: packuments and tarballs by path; records each request."""

    def __init__(self) -> None:
        self.routes: dict[str, bytes] = {}
        self.requests: list[str] = []
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                registry.requests.append(self.path)
                body = registry.routes.get(self.path.split("?")[0])
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "application/json" if body is None or
                                 body.startswith(b"{") else "application/octet-stream")
                body = body if body is not None else b'{"error":"Not found"}'
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,),
                                       daemon=True)

    def publish(self, name: str, versions: dict[str, bytes]) -> dict[str, str]:
        """Serve ``name`` at these versions; returns each version's integrity value."""
        integrity = {}
        documents = {}
        for version, tarball in versions.items():
            path = f"/{name}/-/{name}-{version}.tgz"
            self.routes[path] = tarball
            integrity[version] = "sha512-" + base64.b64encode(
                hashlib.sha512(tarball).digest()).decode()
            documents[version] = {"name": name, "version": version, "dependencies": {},
                                  "dist": {"tarball": self.url.rstrip("/") + path,
                                           "integrity": integrity[version],
                                           "shasum": hashlib.sha1(tarball).hexdigest()}}
        latest = sorted(versions)[-1]
        self.routes[f"/{name}"] = json.dumps({"name": name, "dist-tags": {"latest": latest},
                                              "versions": documents}).encode()
        return integrity


@pytest.fixture
def npm(monkeypatch: pytest.MonkeyPatch) -> Iterator[NpmRegistry]:
    """The loopback registry, which Deno is pointed at."""
    served = NpmRegistry()
    served.thread.start()
    monkeypatch.setenv("NPM_CONFIG_REGISTRY", served.url)
    try:
        yield served
    finally:
        served.server.shutdown()
        served.server.server_close()


def make_wheel(folder: Path, name: str, version: str, files: dict[str, str]) -> Path:
    """A pure-Python wheel, written by hand (no build backend, no network)."""
    folder.mkdir(parents=True, exist_ok=True)
    dist = f"{name.replace('-', '_')}-{version}"
    entries = dict(files)
    entries[f"{dist}.dist-info/METADATA"] = (f"Metadata-Version: 2.1\nName: {name}\n"
                                            f"Version: {version}\n")
    entries[f"{dist}.dist-info/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: tests\n"
                                         "Root-Is-Purelib: true\nTag: py3-none-any\n")
    record = []
    for path, text in entries.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest())
        record.append(f"{path},sha256={digest.rstrip(b'=').decode()},{len(text.encode())}")
    record.append(f"{dist}.dist-info/RECORD,,")
    entries[f"{dist}.dist-info/RECORD"] = "\n".join(record) + "\n"
    wheel = folder / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in entries.items():
            archive.writestr(path, text)
    return wheel


@pytest.fixture
def wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of wheels that pip installs from, and from nothing else."""
    folder = tmp_path / "wheels"
    make_wheel(folder, "wbtest-shout", "1.2.3", {
        "wbtest_shout/__init__.py": "def shout(text):\n    return text.upper() + '!'\n"})
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    return folder


# --- extensions ---------------------------------------------------------------------


def tool_entry(name: str, function: str) -> dict[str, Any]:
    return {"name": name, "description": f"Run {name}. Use when asked to.",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
            "function": function}


def write_extension(folder: Path, name: str, tools: list[dict[str, Any]],
                    files: dict[str, str], entry: str | None = None) -> Path:
    """An extension that uses a dependency: its files as given, its entry among them."""
    return extension_folders.write_extension(
        folder, name, tools, entry=None, files=files, displayName=name.title(),
        description="Uses a dependency.", manifest={"entry": entry} if entry else None)


SHOUT_TS = """
import shout from "workbench-test-shout";

export async function shoutIt(args: { text: string }) {
  return { text: shout(args.text), from: import.meta.resolve("workbench-test-shout") };
}
"""

SHOUT_JS = "module.exports = function shout(text) { return text.toUpperCase() + '!!'; };\n"

SHOUT_PY = """
import wbtest_shout


def shout_it(args, ctx):
    return {"text": wbtest_shout.shout(args["text"]), "file": wbtest_shout.__file__}
"""


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def install(home: Home, source: Path) -> InstallPlan:
    seen: list[InstallPlan] = []
    with Store.open(home.db_path) as store:
        ExtensionManager(home, store, registry_url="http://127.0.0.1:9").install(
            str(source), approve=lambda plan: seen.append(plan) or True)
    return seen[0]


def remove(home: Home, name: str) -> None:
    with Store.open(home.db_path) as store:
        ExtensionManager(home, store, registry_url="http://127.0.0.1:9").remove(name)


async def call(tmp_path: Path, name: str, text: str) -> Any:
    with Host.open(cwd=tmp_path / "work") as host:
        outcome = await host.tools.call(name, {"text": text})
    assert outcome.ok, outcome.error
    return outcome.result


# --- the tests ----------------------------------------------------------------------


async def test_a_deno_extension_uses_its_npm_import_in_the_sandbox(home, npm, tmp_path):
    integrity = npm.publish("workbench-test-shout", {"1.0.0": npm_tarball(
        "workbench-test-shout", "1.0.0", {"index.js": SHOUT_JS})})
    source = write_extension(tmp_path / "src" / "shout-ts", "loca-extension-shout",
                             [tool_entry("shout_ts", "shoutIt")], {
                                 "index.ts": SHOUT_TS,
                                 "deno.json": json.dumps({"imports": {
                                     "workbench-test-shout": "npm:workbench-test-shout@1.0.0"}})})
    before = snapshot(source)

    plan = install(home, source)

    assert [d.describe() for d in plan.dependencies] == ["workbench-test-shout 1.0.0 (npm)"]
    assert plan.dependencies[0].digest == integrity["1.0.0"]
    assert "Dependencies: workbench-test-shout 1.0.0 (npm)" in plan.describe()
    cache = home.cache_dir / "deno" / "loca-extension-shout"
    lock = json.loads((cache / "deno.lock").read_text())
    assert lock["npm"]["workbench-test-shout@1.0.0"]["integrity"] == integrity["1.0.0"]
    served = len(npm.requests)

    result = await call(tmp_path, "shout_ts", "hello")

    assert result["text"] == "HELLO!!"
    assert len(npm.requests) == served  # the worker reached no registry
    assert snapshot(source) == before
    assert snapshot(home.extensions_dir / "loca-extension-shout") == before
    # The tool ran with its own scratch cache; the dependency folder stayed as installed.
    assert (cache / "run" / "shout_ts" / "npm").is_symlink()

    remove(home, "loca-extension-shout")
    assert not cache.exists() and not (home.cache_dir / "deno").exists()


async def test_a_deno_extension_with_only_a_package_json(home, npm, tmp_path):
    npm.publish("workbench-test-shout", {"2.1.0": npm_tarball(
        "workbench-test-shout", "2.1.0", {"index.js": SHOUT_JS.replace("'!!'", "'?'")})})
    source = write_extension(tmp_path / "src" / "shout-pkg", "shout-pkg",
                             [tool_entry("shout_pkg", "shoutIt")], {
                                 "index.ts": SHOUT_TS,
                                 "package.json": json.dumps({
                                     "name": "shout-pkg", "version": "0.1.0",
                                     "dependencies": {"workbench-test-shout": "^2.0.0"}})})
    before = snapshot(source)

    plan = install(home, source)

    assert [d.describe() for d in plan.dependencies] == ["workbench-test-shout 2.1.0 (npm)"]
    assert (await call(tmp_path, "shout_pkg", "hi"))["text"] == "HI?"
    assert snapshot(home.extensions_dir / "shout-pkg") == before == snapshot(source)
    assert not (home.extensions_dir / "shout-pkg" / "node_modules").exists()


async def test_a_python_extension_imports_its_requirement_in_the_sandbox(home, wheels, tmp_path):
    source = write_extension(tmp_path / "src" / "shout-py", "shout-py",
                             [tool_entry("shout_py", "shout_it")],
                             {"main.py": SHOUT_PY, "requirements.txt": "wbtest-shout==1.2.3\n"},
                             entry="main.py")
    before = snapshot(source)

    plan = install(home, source)

    wheel = next(wheels.glob("*.whl"))
    [dependency] = plan.dependencies
    assert dependency.describe() == "wbtest-shout 1.2.3 (file)"
    assert dependency.digest == "sha256:" + hashlib.sha256(wheel.read_bytes()).hexdigest()
    site = home.cache_dir / "python" / "shout-py" / "site"

    result = await call(tmp_path, "shout_py", "hey")

    assert result["text"] == "HEY!"
    assert Path(result["file"]).is_relative_to(site)
    assert snapshot(source) == before == snapshot(home.extensions_dir / "shout-py")

    remove(home, "shout-py")
    assert not (home.cache_dir / "python").exists()


async def test_the_real_npm_registry(home, tmp_path, monkeypatch):
    monkeypatch.delenv("NPM_CONFIG_REGISTRY", raising=False)
    source = write_extension(tmp_path / "src" / "isnum", "isnum",
                             [tool_entry("is_num", "isNum")], {
                                 "deno.json": json.dumps({"imports": {
                                     "is-number": "npm:is-number@7.0.0"}}),
                                 "index.ts": 'import isNumber from "is-number";\n'
                                             "export function isNum(args: { text: string }) {\n"
                                             "  return { number: isNumber(args.text) };\n}\n"})
    plan = install(home, source)
    assert "Dependencies: is-number 7.0.0 (npm)" in plan.describe()
    assert await call(tmp_path, "is_num", "42") == {"number": True}
    assert await call(tmp_path, "is_num", "forty-two") == {"number": False}


async def test_the_real_pypi(home, tmp_path):
    source = write_extension(tmp_path / "src" / "sixer", "sixer",
                             [tool_entry("six_version", "six_version")], {
                                 "main.py": "import six\n\n\ndef six_version(args, ctx):\n"
                                            "    return {'version': six.__version__, "
                                            "'file': six.__file__}\n",
                                 "requirements.txt": "six==1.16.0\n"}, entry="main.py")
    plan = install(home, source)
    [six] = plan.dependencies
    assert six.describe() == "six 1.16.0 (PyPI)"
    assert six.digest == ("sha256:8abb2f1d86890a2dfb989f9a77cfcfd3e47c2a354b01111771326f8aa26e0254")
    result = await call(tmp_path, "six_version", "")
    assert result["version"] == "1.16.0"
    assert Path(result["file"]).is_relative_to(home.cache_dir / "python" / "sixer" / "site")


# --- refusals ------------------------------------------------------------------------


def _nothing_left(home: Home, name: str) -> None:
    assert not (home.extensions_dir / name).exists()
    assert not (home.cache_dir / "deno").exists() and not (home.cache_dir / "python").exists()
    assert not (home.root / "staging").exists()
    with Store.open(home.db_path) as store:
        assert store.get_extension(name) is None


def _shout_extension(tmp_path: Path, folder: str, files: dict[str, str]) -> Path:
    return write_extension(tmp_path / "src" / folder, "loca-extension-shout",
                           [tool_entry("shout_ts", "shoutIt")], {
                               "index.ts": SHOUT_TS,
                               "deno.json": json.dumps({"imports": {
                                   "workbench-test-shout": "npm:workbench-test-shout@1.0.0"}}),
                               **files})


def test_a_package_the_registry_does_not_have_refuses_the_install(home, npm, tmp_path):
    source = _shout_extension(tmp_path, "missing", {})
    before = snapshot(source)
    with pytest.raises(DependencyError) as caught:
        install(home, source)
    message = caught.value.message
    assert message.startswith("the dependencies of loca-extension-shout cannot be installed: "
                              "Deno, caching its dependencies, failed; nothing was installed:")
    assert "error: npm package 'workbench-test-shout' does not exist" in message
    assert caught.value.where == str(source)
    _nothing_left(home, "loca-extension-shout")
    assert snapshot(source) == before


def test_the_authors_lock_is_checked_and_left_as_it_is(home, npm, tmp_path):
    integrity = npm.publish("workbench-test-shout", {"1.0.0": npm_tarball(
        "workbench-test-shout", "1.0.0", {"index.js": SHOUT_JS})})
    lock = {"version": "5", "specifiers": {"npm:workbench-test-shout@1.0.0": "1.0.0"},
            "npm": {"workbench-test-shout@1.0.0": {"integrity": integrity["1.0.0"],
                                                   "tarball": npm.url + "workbench-test-shout"
                                                   "/-/workbench-test-shout-1.0.0.tgz"}},
            "workspace": {"dependencies": ["npm:workbench-test-shout@1.0.0"]}}
    tampered = json.loads(json.dumps(lock))
    tampered["npm"]["workbench-test-shout@1.0.0"]["integrity"] = "sha512-" + base64.b64encode(
        hashlib.sha512(b"something else").digest()).decode()
    source = _shout_extension(tmp_path, "tampered", {"deno.lock": json.dumps(tampered)})
    before = snapshot(source)

    with pytest.raises(DependencyError) as caught:
        install(home, source)

    assert "checksum did not match" in caught.value.message.lower()
    _nothing_left(home, "loca-extension-shout")
    assert snapshot(source) == before

    stale = _shout_extension(tmp_path, "stale", {"deno.lock": json.dumps(
        {"version": "5", "specifiers": {}, "npm": {}})})
    with pytest.raises(DependencyError) as caught:
        install(home, stale)
    assert "the deno.lock shipped with it does not pin what it imports" in caught.value.message
    assert "lockfile is out of date" in caught.value.message
    assert "--frozen=false" not in caught.value.message
    _nothing_left(home, "loca-extension-shout")

    good = _shout_extension(tmp_path, "good", {"deno.lock": json.dumps(lock, indent=2)})
    before = snapshot(good)
    plan = install(home, good)
    assert plan.dependencies[0].digest == integrity["1.0.0"]
    record = json.loads((home.cache_dir / "deno" / "loca-extension-shout" /
                         "dependencies.json").read_text())
    assert record["locked"] is True and record["registry"] == npm.url
    assert snapshot(home.extensions_dir / "loca-extension-shout") == before == snapshot(good)


async def test_an_update_brings_the_new_version_of_a_dependency(home, npm, tmp_path):
    npm.publish("workbench-test-shout", {
        "1.0.0": npm_tarball("workbench-test-shout", "1.0.0", {"index.js": SHOUT_JS}),
        "1.1.0": npm_tarball("workbench-test-shout", "1.1.0", {
            "index.js": SHOUT_JS.replace("'!!'", "' (1.1)'")})})
    install(home, _shout_extension(tmp_path, "v1", {}))
    assert (await call(tmp_path, "shout_ts", "a"))["text"] == "A!!"
    newer = write_extension(tmp_path / "src" / "v2", "loca-extension-shout",
                            [tool_entry("shout_ts", "shoutIt")], {
                                "index.ts": SHOUT_TS,
                                "deno.json": json.dumps({"version": "2.0.0", "imports": {
                                    "workbench-test-shout": "npm:workbench-test-shout@1.1.0"}})})
    seen: list[InstallPlan] = []
    with Store.open(home.db_path) as store:
        ExtensionManager(home, store, registry_url="http://127.0.0.1:9").update(
            "loca-extension-shout", source=str(newer),
            approve=lambda plan: seen.append(plan) or True)
    assert ("  changed since the installed version: workbench-test-shout 1.0.0 -> 1.1.0 (npm)"
            in seen[0].describe())
    assert (await call(tmp_path, "shout_ts", "b"))["text"] == "B (1.1)"
