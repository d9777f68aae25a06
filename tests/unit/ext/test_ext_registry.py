"""Installing from an npm registry: a real HTTP server on loopback serving real packument
JSON and real tarballs made here, checked by integrity before anything is unpacked."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from ext_samples import extension_rows, make_tgz, tree, write_extension, yes

from workbench.config.files import Config, set_setting
from workbench.config.home import Home
from workbench.ext.errors import IntegrityError, RegistryError
from workbench.ext.manager import ExtensionManager
from workbench.ext.registry import RegistryClient, package_url
from workbench.store import Store

NAME = "loca-extension-foo"


class Registry:
    """A tiny npm registry: routes by path, records every request."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, str, bytes]] = {}
        self.requests: list[str] = []
        self.search_results: dict[str, list[dict[str, Any]]] = {}
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                registry.requests.append(self.path)
                status, kind, body = registry.answer(self.path)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,),
                                       daemon=True)

    def answer(self, raw_path: str) -> tuple[int, str, bytes]:
        parts = urlsplit(raw_path)
        if parts.path == "/-/v1/search":
            text = parse_qs(parts.query)["text"][0]
            size = int(parse_qs(parts.query)["size"][0])
            keyword = text.split()[0].removeprefix("keywords:")
            words = text.split()[1:]
            objects = [{"package": package, "score": {"final": 1.0}}
                       for package in self.search_results.get(keyword, [])
                       if all(word in package["name"] + package.get("description", "")
                              for word in words)][:size]
            body = json.dumps({"objects": objects, "total": len(objects)}).encode()
            return 200, "application/json", body
        return self.routes.get(parts.path, (404, "application/json", b'{"error":"Not found"}'))

    def publish(self, name: str, versions: dict[str, bytes], *, latest: str,
                integrity: dict[str, str] | None = None, tags: dict[str, str] | None = None,
                description: str = "Foo things.") -> None:
        """Serve a packument for ``name`` and a tarball per version."""
        doc_versions = {}
        for version, tarball in versions.items():
            path = f"/{name}/-/{name.split('/')[-1]}-{version}.tgz"
            self.routes[path] = (200, "application/octet-stream", tarball)
            sri = "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode()
            doc_versions[version] = {
                "name": name, "version": version, "description": description,
                "dist": {"tarball": self.url + path,
                         "integrity": (integrity or {}).get(version, sri),
                         "shasum": hashlib.sha1(tarball).hexdigest()}}
        doc = {"name": name, "description": description,
               "dist-tags": {"latest": latest, **(tags or {})}, "versions": doc_versions}
        self.routes[urlsplit(package_url(self.url, name)).path] = (
            200, "application/json", json.dumps(doc).encode())


@pytest.fixture
def registry() -> Iterator[Registry]:
    served = Registry()
    served.thread.start()
    try:
        yield served
    finally:
        served.server.shutdown()
        served.server.server_close()


def _tarball(tmp_path: Path, version: str, *, name: str = NAME, permissions=None) -> bytes:
    folder = write_extension(tmp_path / f"src-{name.replace('/', '_')}-{version}", name=name,
                             version=version)
    if permissions is not None:
        manifest = json.loads((folder / "loca.json").read_text())
        manifest["tools"][0]["permissions"] = permissions
        (folder / "loca.json").write_text(json.dumps(manifest))
    return make_tgz(folder, tmp_path / f"{version}.tgz").read_bytes()


@pytest.fixture
def npm_manager(home: Home, store: Store, registry: Registry) -> ExtensionManager:
    """A manager whose registry URL comes from the ``extensions.registry`` setting."""
    set_setting(home, home.root, "extensions.registry", registry.url)
    url = Config.load(home, home.root).get("extensions.registry")
    assert url == registry.url
    return ExtensionManager(home, store, registry_url=url)


def test_install_latest_and_an_exact_version(npm_manager: ExtensionManager, registry: Registry,
                                             store: Store, tmp_path: Path) -> None:
    registry.publish(NAME, {"1.0.0": _tarball(tmp_path, "1.0.0"),
                            "1.1.0": _tarball(tmp_path, "1.1.0")}, latest="1.1.0")

    installed = npm_manager.install(f"npm:{NAME}", approve=yes)
    assert (installed.version, installed.state, installed.source) == ("1.1.0", "ok", f"npm:{NAME}")
    assert f"/{NAME}/-/{NAME}-1.1.0.tgz" in registry.requests
    npm_manager.remove(NAME)

    installed = npm_manager.install(f"npm:{NAME}@1.0.0", approve=yes)
    assert (installed.version, installed.source) == ("1.0.0", f"npm:{NAME}@1.0.0")
    assert store.get_extension(NAME)["source"] == f"npm:{NAME}@1.0.0"
    assert not (npm_manager.home.root / "staging").exists()


def test_tags_and_ranges_pick_a_version(registry: Registry, tmp_path: Path) -> None:
    tarball = _tarball(tmp_path, "1.0.0")
    registry.publish(NAME, {v: tarball for v in ("1.0.0", "1.2.0", "2.0.0-beta.1")},
                     latest="1.2.0", tags={"next": "2.0.0-beta.1"})
    client = RegistryClient(registry.url)
    assert client.resolve(NAME).version == "1.2.0"
    assert client.resolve(NAME, "next").version == "2.0.0-beta.1"
    assert client.resolve(NAME, "^1.0").version == "1.2.0"
    assert client.resolve(NAME, "~1.0.0").version == "1.0.0"
    with pytest.raises(RegistryError, match="no version of .* matches '\\^3'"):
        client.resolve(NAME, "^3")


def test_scoped_names_are_encoded(registry: Registry, npm_manager: ExtensionManager,
                                  tmp_path: Path) -> None:
    scoped = "@acme/loca-extension-bar"
    assert package_url("http://r", scoped) == "http://r/@acme%2Floca-extension-bar"
    # The extension inside is named as its manifest says, not as the package.
    registry.publish(scoped, {"2.0.0": _tarball(tmp_path, "2.0.0", name="acme-bar")},
                     latest="2.0.0")
    installed = npm_manager.install(f"npm:{scoped}", approve=yes)
    assert installed.name == "acme-bar" and installed.version == "2.0.0"
    assert "/@acme%2Floca-extension-bar" in registry.requests


def test_tampered_tarball_is_refused_before_unpacking(npm_manager: ExtensionManager,
                                                      registry: Registry, home: Home,
                                                      store: Store, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    good = _tarball(tmp_path, "1.0.0")
    registry.publish(NAME, {"1.0.0": good}, latest="1.0.0")
    # Swap the served bytes for another tarball, keeping the registry's integrity value.
    path = f"/{NAME}/-/{NAME}-1.0.0.tgz"
    registry.routes[path] = (200, "application/octet-stream", _tarball(tmp_path / "evil", "1.0.0"))
    unpacked: list[Path] = []
    import workbench.ext.fetch as fetch_module

    real_extract = fetch_module.extract_archive
    monkeypatch.setattr(fetch_module, "extract_archive",
                        lambda archive, *a, **k: unpacked.append(archive) or real_extract(
                            archive, *a, **k))
    before_tree, before_rows = tree(home.root), extension_rows(store)

    with pytest.raises(IntegrityError) as caught:
        npm_manager.install(f"npm:{NAME}", approve=yes)

    message = str(caught.value)
    assert "does not match the registry's checksum" in message and "sha512-" in message
    assert caught.value.where == registry.url + path
    assert unpacked == []
    assert tree(home.root) == before_tree and extension_rows(store) == before_rows


def test_shasum_is_used_only_without_integrity(registry: Registry, npm_manager: ExtensionManager,
                                               tmp_path: Path) -> None:
    tarball = _tarball(tmp_path, "1.0.0")
    registry.publish(NAME, {"1.0.0": tarball}, latest="1.0.0", integrity={"1.0.0": ""})
    installed = npm_manager.install(f"npm:{NAME}", approve=yes)
    assert installed.state == "ok"
    npm_manager.remove(NAME)
    # A wrong shasum with no integrity is refused.
    doc_path = urlsplit(package_url(registry.url, NAME)).path
    doc = json.loads(registry.routes[doc_path][2])
    doc["versions"]["1.0.0"]["dist"]["shasum"] = "0" * 40
    registry.routes[doc_path] = (200, "application/json", json.dumps(doc).encode())
    with pytest.raises(IntegrityError, match="sha1-"):
        npm_manager.install(f"npm:{NAME}", approve=yes)


def test_no_checksum_at_all_is_refused(registry: Registry, tmp_path: Path) -> None:
    registry.publish(NAME, {"1.0.0": _tarball(tmp_path, "1.0.0")}, latest="1.0.0",
                     integrity={"1.0.0": ""})
    doc_path = urlsplit(package_url(registry.url, NAME)).path
    doc = json.loads(registry.routes[doc_path][2])
    del doc["versions"]["1.0.0"]["dist"]["shasum"]
    registry.routes[doc_path] = (200, "application/json", json.dumps(doc).encode())
    client = RegistryClient(registry.url)
    with pytest.raises(IntegrityError, match="no usable checksum"):
        client.download(client.resolve(NAME), tmp_path / "x.tgz")
    assert not (tmp_path / "x.tgz").exists()


def test_unknown_package_bad_json_and_errors(registry: Registry, tmp_path: Path) -> None:
    client = RegistryClient(registry.url)
    with pytest.raises(RegistryError, match="no package named 'loca-extension-none'"):
        client.resolve("loca-extension-none")
    registry.routes["/broken"] = (200, "application/json", b"{not json")
    with pytest.raises(RegistryError, match="not valid JSON") as caught:
        client.resolve("broken")
    assert caught.value.where == registry.url + "/broken"
    registry.routes["/odd"] = (200, "application/json", b"[1, 2]")
    with pytest.raises(RegistryError, match="not a package document"):
        client.resolve("odd")
    registry.routes["/down"] = (503, "text/plain", b"busy")
    with pytest.raises(RegistryError, match="answered 503"):
        client.resolve("down")


def test_unreachable_registry_is_a_clear_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = RegistryClient(f"http://127.0.0.1:{port}", timeout=2)
    with pytest.raises(RegistryError, match="cannot reach the registry"):
        client.resolve(NAME)


def test_a_silent_registry_times_out(tmp_path: Path) -> None:
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    try:
        client = RegistryClient(f"http://127.0.0.1:{listener.getsockname()[1]}", timeout=0.3)
        with pytest.raises(RegistryError, match="did not answer within 0.3 s"):
            client.resolve(NAME)
    finally:
        listener.close()


def test_search_merges_both_keywords(registry: Registry, npm_manager: ExtensionManager) -> None:
    registry.search_results = {
        "loca-extension": [
            {"name": "loca-extension-foo", "description": "Foo things.", "version": "1.2.0",
             "keywords": ["loca-extension"]},
            {"name": "loca-extension-weather", "description": "Weather.", "version": "0.3.1"}],
        "workbench-extension": [
            {"name": "loca-extension-foo", "description": "Foo things.", "version": "1.2.0"},
            {"name": "wb-notes", "description": "Notes for foo.", "version": "2.0.0"}],
    }
    results = npm_manager.search([])
    assert [(r.name, r.description, r.version) for r in results] == [
        ("loca-extension-foo", "Foo things.", "1.2.0"),
        ("loca-extension-weather", "Weather.", "0.3.1"),
        ("wb-notes", "Notes for foo.", "2.0.0")]
    assert [r.name for r in npm_manager.search(["foo"])] == ["loca-extension-foo", "wb-notes"]
    assert [r.name for r in npm_manager.search([], limit=1)] == ["loca-extension-foo"]
    searched = [parse_qs(urlsplit(p).query)["text"][0] for p in registry.requests
                if p.startswith("/-/v1/search")]
    assert searched[:2] == ["keywords:loca-extension", "keywords:workbench-extension"]
    assert "keywords:loca-extension foo" in searched


def test_update_from_the_registry_moves_to_latest(registry: Registry,
                                                  npm_manager: ExtensionManager,
                                                  tmp_path: Path) -> None:
    registry.publish(NAME, {"1.0.0": _tarball(tmp_path, "1.0.0")}, latest="1.0.0")
    npm_manager.install(f"npm:{NAME}@1.0.0", approve=yes)
    registry.publish(NAME, {"1.0.0": _tarball(tmp_path, "1.0.0"),
                            "1.1.0": _tarball(tmp_path / "n", "1.1.0",
                                              permissions={"net": [{"host": "*", "ports": [443],
                                                                    "reason": "Any site."}]})},
                     latest="1.1.0")
    plans = []
    updated = npm_manager.update(NAME, approve=lambda plan: plans.append(plan) or True)
    assert updated.version == "1.1.0" and updated.state == "ok"
    assert plans[0].previous_version == "1.0.0"
    assert any(c.change == "widened" and c.value == "*:443" for c in plans[0].diff.permissions)


@pytest.mark.network
def test_the_real_npm_registry(tmp_path: Path) -> None:
    """Opt-in (``pytest -m network``): a real package resolved on registry.npmjs.org,
    downloaded and checked against its real integrity value, then unpacked safely."""
    from workbench.ext.archive import extract_archive

    client = RegistryClient("https://registry.npmjs.org", timeout=30)
    version = client.resolve("left-pad", "^1.3")
    assert version.version.startswith("1.3.") and version.integrity.startswith("sha512-")
    path = client.download(version, tmp_path / "left-pad.tgz")
    root = extract_archive(path, tmp_path / "unpacked")
    assert json.loads((root / "package.json").read_text())["name"] == "left-pad"


@pytest.mark.parametrize("value", ["ftp://registry", "registry.npmjs.org", "https://", ""])
def test_the_registry_setting_must_be_an_http_url(value: str) -> None:
    from workbench.config.settings import validate
    from workbench.errors import ConfigError

    with pytest.raises(ConfigError, match="must be an http:// or https:// URL"):
        validate("extensions.registry", value)
    assert validate("extensions.registry", "http://127.0.0.1:4873/") == "http://127.0.0.1:4873/"
