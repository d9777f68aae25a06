"""The signed built-in extension: installed offline on first start, refused when tampered."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from workbench.config.home import Home
from workbench.ext.errors import ExtensionError, SignatureError
from workbench.ext.manager import BUILTIN_DIR, ExtensionManager
from workbench.ext.signature import (
    PUBLIC_KEY_PATH,
    load_public_key,
    public_key_hex,
    sign_folder,
    verify_folder,
)
from workbench.store import Store


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any use of the network fails the test."""

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the network was used")

    monkeypatch.setattr(httpx.Client, "__init__", refuse)
    monkeypatch.setattr(httpx.Client, "send", refuse)


@pytest.fixture
def signed_copy(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the built-in signed with a key made for the test, and its public key."""
    folder = tmp_path / "builtin"
    shutil.copytree(BUILTIN_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    key = Ed25519PrivateKey.generate()
    sign_folder(folder, key)
    public = tmp_path / "test.pub"
    public.write_text(public_key_hex(key.public_key()) + "\n")
    return folder, public


def test_checked_in_signature_verifies_the_checked_in_builtin() -> None:
    """Changing extensions/builtin without `python scripts/sign_builtin.py` fails here."""
    signed = verify_folder(BUILTIN_DIR, load_public_key(PUBLIC_KEY_PATH))
    assert "loca.json" in signed.by_path() and "SIGNATURE" not in signed.by_path()


def test_fresh_home_installs_the_builtin_offline(offline: None, home: Home,
                                                 store: Store) -> None:
    manager = ExtensionManager(home, store, registry_url="https://registry.invalid")
    plan = manager.ensure_builtin()
    assert plan is not None and plan.action == "builtin" and plan.source == "builtin"
    [builtin] = manager.list()
    assert builtin.name == "builtin" and builtin.state == "ok" and builtin.builtin
    assert {"read_file", "word_count"} <= set(builtin.tools)
    assert (builtin.path / "SIGNATURE").is_file()
    assert store.get_consent("builtin")["digest"] == builtin.digest
    assert manager.ensure_builtin() is None  # already the packaged copy


def test_tampered_builtin_is_refused_and_not_installed(signed_copy: tuple[Path, Path],
                                                       home: Home, store: Store) -> None:
    folder, public = signed_copy
    (folder / "main.py").write_text((folder / "main.py").read_text() + "\nimport os\n")
    manager = ExtensionManager(home, store, builtin_dir=folder, public_key_path=public)
    with pytest.raises(SignatureError, match="do not match their signature") as caught:
        manager.ensure_builtin()
    assert caught.value.where == str(home.root / "staging" / caught.value.where.split("/")[-2]
                                     / "pkg") or "refusing to install" in str(caught.value)
    assert manager.list() == [] and store.get_extension("builtin") is None
    assert list(home.extensions_dir.iterdir()) == []
    assert not (home.root / "staging").exists()


@pytest.mark.parametrize("change", ["added", "removed", "signature-missing", "wrong-key"])
def test_other_tampering_is_refused(change: str, signed_copy: tuple[Path, Path], home: Home,
                                    store: Store, tmp_path: Path) -> None:
    folder, public = signed_copy
    if change == "added":
        (folder / "extra.py").write_text("print('hi')\n")
    elif change == "removed":
        (folder / "main.py").unlink()
    elif change == "signature-missing":
        (folder / "SIGNATURE").unlink()
    else:
        public.write_text(public_key_hex(Ed25519PrivateKey.generate().public_key()))
    manager = ExtensionManager(home, store, builtin_dir=folder, public_key_path=public)
    with pytest.raises(SignatureError):
        manager.ensure_builtin()
    assert store.get_extension("builtin") is None


def test_a_newer_packaged_builtin_is_reinstalled(signed_copy: tuple[Path, Path], home: Home,
                                                 store: Store, tmp_path: Path) -> None:
    folder, public = signed_copy
    manager = ExtensionManager(home, store, builtin_dir=folder, public_key_path=public)
    first = manager.ensure_builtin()
    # A new workbench ships a changed, properly signed built-in.
    key = Ed25519PrivateKey.generate()
    public.write_text(public_key_hex(key.public_key()))
    (folder / "NOTES.md").write_text("What changed.\n")
    sign_folder(folder, key)
    second = manager.ensure_builtin()
    assert second is not None and second.digest != first.digest
    assert second.diff is not None and second.diff.empty
    installed = manager.get("builtin")
    assert installed.state == "ok" and (installed.path / "NOTES.md").is_file()
    # A packaged copy changed without re-signing is refused; the installed one stays.
    (folder / "NOTES.md").write_text("Unsigned change.\n")
    with pytest.raises(SignatureError):
        manager.ensure_builtin()
    assert (installed.path / "NOTES.md").read_text() == "What changed.\n"
    assert manager.get("builtin").state == "ok"


def test_a_tampered_installed_builtin_is_restored(signed_copy: tuple[Path, Path], home: Home,
                                                  store: Store) -> None:
    folder, public = signed_copy
    manager = ExtensionManager(home, store, builtin_dir=folder, public_key_path=public)
    manager.ensure_builtin()
    installed = home.extensions_dir / "builtin" / "main.py"
    installed.write_text(installed.read_text() + "\nprint('owned')\n")
    held = manager.get("builtin")
    assert held.state == "held" and "main.py" in held.reason and "signed copy" in held.reason
    assert manager.ensure_builtin() is not None
    assert installed.read_text() == (folder / "main.py").read_text()
    assert manager.get("builtin").state == "ok"


def test_the_builtin_cannot_be_removed_trusted_or_replaced(signed_copy: tuple[Path, Path],
                                                           home: Home, store: Store) -> None:
    folder, public = signed_copy
    manager = ExtensionManager(home, store, builtin_dir=folder, public_key_path=public)
    manager.ensure_builtin()
    with pytest.raises(ExtensionError, match="cannot be removed"):
        manager.remove("builtin")
    with pytest.raises(ExtensionError, match="signature"):
        manager.trust("builtin")
    with pytest.raises(ExtensionError, match="updated with workbench itself"):
        manager.update("builtin", approve=lambda plan: True)
    assert manager.get("builtin").state == "ok"


def test_a_missing_builtin_folder_is_an_error(home: Home, store: Store, tmp_path: Path) -> None:
    manager = ExtensionManager(home, store, builtin_dir=tmp_path / "nowhere")
    with pytest.raises(ExtensionError, match="missing from the installation"):
        manager.ensure_builtin()
