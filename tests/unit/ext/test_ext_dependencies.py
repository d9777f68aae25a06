"""Dependencies resolved and locked at install into folders of ours, never the author's.

Python requirements come from a folder of wheels made here (``PIP_NO_INDEX`` and
``PIP_FIND_LINKS``), so these tests reach no network; the Deno side's own tests
against a registry on loopback are in ``tests/integration/test_dependencies_sandboxed.py``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from ext_samples import extension_rows, tree, write_extension, yes

from workbench.config.home import Home
from workbench.ext.dependencies import (
    Dependency,
    DependencyError,
    _lock_packages,
    _trim,
    installed_dependencies,
)
from workbench.ext.errors import InstallDeclined
from workbench.ext.manager import CRASH_ENV, ExtensionManager
from workbench.ext.plan import InstallPlan
from workbench.permissions.policy import build_policy
from workbench.sandbox import deno
from workbench.sandbox.policy import Limits, Policy
from workbench.store import Store

NAME = "loca-extension-foo"

SHOUT = "def shout(text):\n    return text.upper() + '!'\n"


def make_wheel(folder: Path, name: str, version: str, files: dict[str, str],
               requires: tuple[str, ...] = ()) -> Path:
    """A pure-Python wheel, written by hand (no build backend, no network)."""
    folder.mkdir(parents=True, exist_ok=True)
    dist = f"{name.replace('-', '_')}-{version}"
    entries = dict(files)
    entries[f"{dist}.dist-info/METADATA"] = (f"Metadata-Version: 2.1\nName: {name}\n"
                                            f"Version: {version}\n"
                                            + "".join(f"Requires-Dist: {r}\n" for r in requires))
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


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Wheels of ``wbtest-shout`` 1.2.3 and 2.0.0 (which needs ``wbtest-base``); pip
    installs from this folder and nothing else."""
    folder = tmp_path / "wheels"
    make_wheel(folder, "wbtest-shout", "1.2.3", {"wbtest_shout/__init__.py": SHOUT})
    make_wheel(folder, "wbtest-base", "0.1.0", {"wbtest_base/__init__.py": "BASE = 1\n"})
    make_wheel(folder, "wbtest-shout", "2.0.0", {"wbtest_shout/__init__.py": SHOUT},
               requires=("wbtest-base>=0.1",))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    return folder


def python_extension(folder: Path, requirements: str | None = "wbtest-shout==1.2.3\n", *,
                     version: str = "1.0.0", files: dict[str, str] | None = None) -> Path:
    extra = dict(files or {})
    if requirements is not None:
        extra["requirements.txt"] = requirements
    return write_extension(folder, version=version, files=extra)


def nothing_left(home: Home, store: Store, before_tree: dict[str, str], before_rows) -> None:
    assert tree(home.root) == before_tree
    assert extension_rows(store) == before_rows
    assert not (home.extensions_dir / NAME).exists()
    assert not (home.cache_dir / "python").exists() and not (home.cache_dir / "deno").exists()
    assert not (home.root / "staging").exists()


# --- Python requirements ---------------------------------------------------------------


def test_requirements_are_installed_recorded_and_removed(manager: ExtensionManager, home: Home,
                                                        store: Store, wheels: Path,
                                                        tmp_path: Path) -> None:
    source = python_extension(tmp_path / "src" / "foo")
    author = tree(source)
    before_tree, before_rows = tree(home.root), extension_rows(store)
    seen: list[InstallPlan] = []

    manager.install(str(source), approve=lambda plan: seen.append(plan) or True)

    wheel = wheels / "wbtest_shout-1.2.3-py3-none-any.whl"
    digest = "sha256:" + sha256(wheel)
    assert seen[0].dependencies == (Dependency("wbtest-shout", "1.2.3", "file", digest, True),)
    assert "Dependencies: wbtest-shout 1.2.3 (file)" in seen[0].describe()
    assert seen[0].to_json()["dependencies"][0]["digest"] == digest
    folder = home.cache_dir / "python" / NAME
    assert (folder / "site" / "wbtest_shout" / "__init__.py").read_text() == SHOUT
    record = json.loads((folder / "dependencies.json").read_text())
    assert record["packages"] == [{"name": "wbtest-shout", "version": "1.2.3", "source": "file",
                                   "digest": digest, "direct": True}]
    assert record["inputs"] == {"requirements.txt": sha256(source / "requirements.txt")}
    assert record["locked"] is False
    assert sorted(os.listdir(folder)) == ["dependencies.json", "site"]
    assert installed_dependencies(home.cache_dir, NAME) == seen[0].dependencies
    # The author's folder and the installed copy are byte for byte what was approved.
    assert tree(source) == author == tree(home.extensions_dir / NAME)
    assert manager.verify(NAME).ok
    assert not (home.root / "staging").exists()

    manager.remove(NAME)

    assert tree(home.root) == before_tree
    assert extension_rows(store) == before_rows


def test_pinned_hashes_are_checked(manager: ExtensionManager, home: Home, store: Store,
                                   wheels: Path, tmp_path: Path) -> None:
    right = sha256(wheels / "wbtest_shout-1.2.3-py3-none-any.whl")
    good = python_extension(tmp_path / "good", f"wbtest-shout==1.2.3 \\\n    --hash=sha256:{right}\n")
    manager.install(str(good), approve=yes)
    record = json.loads((home.cache_dir / "python" / NAME / "dependencies.json").read_text())
    assert record["locked"] is True
    manager.remove(NAME)

    before_tree, before_rows = tree(home.root), extension_rows(store)
    bad = python_extension(tmp_path / "bad", "wbtest-shout==1.2.3 --hash=sha256:" + "0" * 64)
    with pytest.raises(DependencyError) as caught:
        manager.install(str(bad), approve=yes)
    assert "THESE PACKAGES DO NOT MATCH THE HASHES" in caught.value.message
    assert caught.value.where == str(bad)
    nothing_left(home, store, before_tree, before_rows)


def test_a_missing_package_refuses_the_install_and_leaves_nothing(
        manager: ExtensionManager, home: Home, store: Store, wheels: Path,
        tmp_path: Path) -> None:
    source = python_extension(tmp_path / "src", "wbtest-shout==1.2.3\nwbtest-nowhere==9.9\n")
    author = tree(source)
    before_tree, before_rows = tree(home.root), extension_rows(store)
    asked: list[InstallPlan] = []

    with pytest.raises(DependencyError) as caught:
        manager.install(str(source), approve=lambda plan: asked.append(plan) or True)

    message = caught.value.message
    assert message.startswith(f"the dependencies of {NAME} cannot be installed: pip")
    assert "No matching distribution found for wbtest-nowhere==9.9" in message
    assert "only wheels are installed" in message
    assert "Stack backtrace" not in message and "\x1b[" not in message
    assert asked == []  # refused before the person was asked
    nothing_left(home, store, before_tree, before_rows)
    assert tree(source) == author
    assert not [e for e in store.list_audit() if e["action"] == "extension.install"]


def test_a_declined_install_leaves_no_dependencies(manager: ExtensionManager, home: Home,
                                                   store: Store, wheels: Path,
                                                   tmp_path: Path) -> None:
    before_tree, before_rows = tree(home.root), extension_rows(store)
    with pytest.raises(InstallDeclined):
        manager.install(str(python_extension(tmp_path / "src")), approve=lambda _plan: False)
    nothing_left(home, store, before_tree, before_rows)


def test_a_resolver_that_takes_too_long_is_stopped(home: Home, store: Store, wheels: Path,
                                                   tmp_path: Path) -> None:
    manager = ExtensionManager(home, store, registry_url="http://127.0.0.1:9",
                               dependency_timeout_s=0.05)
    before_tree, before_rows = tree(home.root), extension_rows(store)
    with pytest.raises(DependencyError, match=r"took longer than 0\.05 s and was stopped"):
        manager.install(str(python_extension(tmp_path / "src")), approve=yes)
    nothing_left(home, store, before_tree, before_rows)


@pytest.mark.parametrize("requirements, refusal", [
    ("-e .\n", "line 1: -e is not accepted: an editable install builds"),
    ("six\n--no-binary :all:\n", "line 2: --no-binary is not accepted: it builds packages"),
    ("-r other.txt\n", "line 1: -r is not accepted: it reads another file"),
    ("# a comment\n\n./vendored/pkg\n", "line 3: './vendored/pkg' is a local path or a URL"),
    ("git+https://example.com/x.git\n", "is a local path or a URL"),
    ("https://example.com/x-1.0-py3-none-any.whl\n", "is a local path or a URL"),
    ("x @ https://example.com/x-1.0.tar.gz\n", "only wheels are installed"),
    ("x==1 --config-settings=a=b\n", "the option --config-settings is not accepted"),
    ("--trusted-host example.com\nx\n", "the option --trusted-host is not accepted"),
])
def test_requirements_that_would_build_or_read_elsewhere_are_refused(
        manager: ExtensionManager, home: Home, store: Store, tmp_path: Path, requirements: str,
        refusal: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    before_tree, before_rows = tree(home.root), extension_rows(store)
    with pytest.raises(DependencyError) as caught:
        manager.plan(str(python_extension(tmp_path / "src", requirements)))
    assert refusal in caught.value.message
    nothing_left(home, store, before_tree, before_rows)


def test_pyproject_dependencies_when_there_is_no_requirements_file(
        manager: ExtensionManager, home: Home, wheels: Path, tmp_path: Path) -> None:
    source = python_extension(tmp_path / "src", None, files={"pyproject.toml": (
        '[project]\nname = "foo"\nversion = "1.0.0"\n'
        'dependencies = ["wbtest-shout>=2"]\n')})
    plan = manager.plan(str(source))
    try:
        assert [d.describe() for d in plan.dependencies] == ["wbtest-shout 2.0.0 (file)",
                                                             "wbtest-base 0.1.0 (file)"]
        assert [d.direct for d in plan.dependencies] == [True, False]
        assert ("  which need: wbtest-base 0.1.0 (file)") in plan.describe()
    finally:
        manager.discard(plan)
    dynamic = python_extension(tmp_path / "dynamic", None, files={"pyproject.toml": (
        '[project]\nname = "foo"\nversion = "1.0.0"\ndynamic = ["dependencies"]\n')})
    with pytest.raises(DependencyError, match="dynamic dependencies need the package to be built"):
        manager.plan(str(dynamic))


def test_an_extension_without_requirements_gets_no_dependency_folder(
        manager: ExtensionManager, home: Home, tmp_path: Path) -> None:
    plan = manager.plan(str(python_extension(tmp_path / "src", "# nothing yet\n")))
    assert plan.dependencies == () and "Dependencies: none" in plan.describe()
    manager.install(plan, approve=yes)
    assert not (home.cache_dir / "python").exists()


def test_an_update_replaces_the_dependencies_and_shows_the_change(
        manager: ExtensionManager, home: Home, store: Store, wheels: Path,
        tmp_path: Path) -> None:
    manager.install(str(python_extension(tmp_path / "v1")), approve=yes)
    site = home.cache_dir / "python" / NAME / "site"
    assert (site / "wbtest_shout-1.2.3.dist-info").is_dir()

    seen: list[InstallPlan] = []
    manager.update(NAME, source=str(python_extension(tmp_path / "v2", "wbtest-shout==2.0.0\n",
                                                     version="2.0.0")),
                   approve=lambda plan: seen.append(plan) or True)

    text = "\n".join(seen[0].describe())
    assert "Dependencies: wbtest-shout 2.0.0 (file)" in text
    assert ("changed since the installed version: added wbtest-base 0.1.0 (file), "
            "wbtest-shout 1.2.3 -> 2.0.0 (file)") in text
    assert [d.name for d in seen[0].previous_dependencies] == ["wbtest-shout"]
    assert sorted(p.name for p in site.iterdir() if p.name.endswith(".dist-info")) == [
        "wbtest_base-0.1.0.dist-info", "wbtest_shout-2.0.0.dist-info"]

    declined = python_extension(tmp_path / "v3", "wbtest-shout==1.2.3\n", version="3.0.0")
    with pytest.raises(InstallDeclined):
        manager.update(NAME, source=str(declined), approve=lambda _plan: False)
    assert (site / "wbtest_shout-2.0.0.dist-info").is_dir()  # untouched

    manager.update(NAME, source=str(python_extension(tmp_path / "v4", None, version="4.0.0")),
                   approve=yes)
    assert not (home.cache_dir / "python").exists()
    assert manager.get(NAME).version == "4.0.0"


def test_an_update_whose_dependencies_fail_keeps_the_installed_version(
        manager: ExtensionManager, home: Home, store: Store, wheels: Path,
        tmp_path: Path) -> None:
    manager.install(str(python_extension(tmp_path / "v1")), approve=yes)
    before_tree, before_rows = tree(home.root), extension_rows(store)
    broken = python_extension(tmp_path / "v2", "wbtest-shout==7.0\n", version="2.0.0")
    with pytest.raises(DependencyError, match="wbtest-shout==7.0"):
        manager.update(NAME, source=str(broken), approve=yes)
    assert tree(home.root) == before_tree and extension_rows(store) == before_rows


# --- kills and leftovers ------------------------------------------------------------------

CHILD = """
import sys
from workbench.config.home import Home
from workbench.ext.manager import ExtensionManager
from workbench.store import Store

home = Home.resolve().ensure()
manager = ExtensionManager(home, Store.open(home.db_path), registry_url="http://127.0.0.1:9")
if sys.argv[1] == "install":
    manager.install(sys.argv[2], approve=lambda plan: True)
else:
    manager.update("loca-extension-foo", source=sys.argv[2], approve=lambda plan: True)
print("finished")
"""


def _killed_at(step: str, operation: str, source: Path) -> None:
    env = {**os.environ, CRASH_ENV: step}
    done = subprocess.run([sys.executable, "-c", CHILD, operation, str(source)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stderr)


def test_a_kill_after_the_dependencies_moved_in_leaves_no_trace(
        manager: ExtensionManager, home: Home, store: Store, wheels: Path,
        tmp_path: Path) -> None:
    before_tree, before_rows = tree(home.root), extension_rows(store)
    _killed_at("after-deps", "install", python_extension(tmp_path / "src"))
    assert (home.cache_dir / "python" / NAME / "site").is_dir()  # the kill's leftovers

    restarted = ExtensionManager(home, store, registry_url="http://127.0.0.1:9")

    assert restarted.list() == []
    assert tree(home.root) == before_tree and extension_rows(store) == before_rows


def test_a_kill_during_an_update_puts_the_old_dependencies_back(
        manager: ExtensionManager, home: Home, store: Store, wheels: Path,
        tmp_path: Path) -> None:
    manager.install(str(python_extension(tmp_path / "v1")), approve=yes)
    before_tree, before_rows = tree(home.root), extension_rows(store)
    for step in ("update-aside", "after-deps"):
        _killed_at(step, "update", python_extension(tmp_path / step, "wbtest-shout==2.0.0\n",
                                                     version="2.0.0"))
        restarted = ExtensionManager(home, store, registry_url="http://127.0.0.1:9")
        assert [r.action for r in restarted.repairs] == ["restored"], step
        assert tree(home.root) == before_tree, step
        assert extension_rows(store) == before_rows


def test_a_kill_after_the_rename_keeps_the_new_dependencies(
        manager: ExtensionManager, home: Home, store: Store, wheels: Path,
        tmp_path: Path) -> None:
    manager.install(str(python_extension(tmp_path / "v1")), approve=yes)
    _killed_at("after-rename", "update", python_extension(tmp_path / "v2", "wbtest-shout==2.0.0\n",
                                                          version="2.0.0"))
    restarted = ExtensionManager(home, store, registry_url="http://127.0.0.1:9")
    assert restarted.get(NAME).version == "2.0.0" and restarted.get(NAME).state == "ok"
    assert [d.version for d in installed_dependencies(home.cache_dir, NAME)] == ["2.0.0", "0.1.0"]


def test_dependency_folders_of_extensions_not_installed_are_swept(
        home: Home, store: Store) -> None:
    orphan = home.cache_dir / "python" / "gone"
    (orphan / "site").mkdir(parents=True)
    (orphan / "dependencies.json").write_text('{"runtime": "python", "packages": []}')
    scratch = home.cache_dir / "deno" / "samples" / "run" / "sample_choice"
    scratch.mkdir(parents=True)  # a tool's own Deno cache, not installed dependencies

    manager = ExtensionManager(home, store, registry_url="http://127.0.0.1:9")

    assert [(r.name, r.action) for r in manager.repairs] == [("gone", "cleaned")]
    assert not (home.cache_dir / "python").exists()
    assert scratch.is_dir()


# --- Deno: what needs no registry ---------------------------------------------------------


def test_an_unreachable_npm_registry_refuses_the_install(
        manager: ExtensionManager, home: Home, store: Store, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NPM_CONFIG_REGISTRY", "http://127.0.0.1:9/")
    source = write_extension(tmp_path / "src", tools=[{
        "name": "foo", "description": "Do foo. Use when asked to foo.",
        "parameters": {"type": "object", "properties": {}}, "function": "foo"}],
        manifest={"entry": "index.ts"}, files={
            "index.ts": 'import isNumber from "is-number";\nexport const foo = () => isNumber(1);\n',
            "deno.json": json.dumps({"imports": {"is-number": "npm:is-number@7.0.0"}})})
    (source / "main.py").unlink()
    author = tree(source)
    before_tree, before_rows = tree(home.root), extension_rows(store)

    with pytest.raises(DependencyError) as caught:
        manager.install(str(source), approve=yes)

    message = caught.value.message
    assert message.startswith(f"the dependencies of {NAME} cannot be installed: Deno")
    assert "is-number" in message and "error:" in message
    assert "Stack backtrace" not in message
    nothing_left(home, store, before_tree, before_rows)
    assert tree(source) == author


def test_a_deno_extension_without_remote_imports_has_no_dependency_folder(
        manager: ExtensionManager, home: Home, tmp_path: Path) -> None:
    source = write_extension(tmp_path / "src", tools=[{
        "name": "foo", "description": "Do foo. Use when asked to foo.",
        "parameters": {"type": "object", "properties": {}}, "function": "foo"}],
        manifest={"entry": "index.ts"}, files={
            "index.ts": 'import { two } from "./two.ts";\nexport const foo = () => two;\n',
            "two.ts": "export const two = 2;\n", "deno.json": '{"exports": "./index.ts"}'})
    plan = manager.plan(str(source))
    assert plan.dependencies == ()
    manager.install(plan, approve=yes)
    assert not (home.cache_dir / "deno").exists()


def test_lock_files_name_every_package_with_its_checksum() -> None:
    lock = {
        "version": "5",
        "specifiers": {"npm:is-odd@3": "3.0.1", "jsr:@std/assert@1": "1.0.13",
                       "npm:@scope/pkg@^2": "2.0.0_react@18.2.0"},
        "jsr": {"@std/assert@1.0.13": {"integrity": "ab12"}},
        "npm": {"is-number@6.0.0": {"integrity": "sha512-six"},
                "is-odd@3.0.1": {"integrity": "sha512-odd", "dependencies": ["is-number"]},
                "@scope/pkg@2.0.0_react@18.2.0": {"integrity": "sha512-pkg"}},
        "remote": {"https://example.com/mod.ts": "cd34"},
    }
    assert _lock_packages(lock) == (
        Dependency("@std/assert", "1.0.13", "jsr", "sha256:ab12", True),
        Dependency("@scope/pkg", "2.0.0", "npm", "sha512-pkg", True),
        Dependency("is-odd", "3.0.1", "npm", "sha512-odd", True),
        Dependency("https://example.com/mod.ts", "", "remote", "sha256:cd34", True),
        Dependency("is-number", "6.0.0", "npm", "sha512-six", False),
    )
    assert _lock_packages({"version": "5"}) == ()


def test_messages_are_trimmed_to_what_the_tool_said() -> None:
    deno_output = ("\x1b[0m\x1b[32mDownload\x1b[0m https://registry.npmjs.org/x\n"
                   "\x1b[1m\x1b[31merror\x1b[0m: npm package 'x' does not exist.\n\n"
                   "Stack backtrace:\n   0: <unknown>\n")
    assert _trim(deno_output) == "error: npm package 'x' does not exist."
    pip_output = ("WARNING: Location 'file:///opt/x/' is ignored: it is neither a file nor a "
                  "directory.\nLooking in links: /w\nERROR: Could not find a version that "
                  "satisfies the requirement y==1 (from versions: none)\n"
                  "ERROR: No matching distribution found for y==1\n")
    assert _trim(pip_output).splitlines() == [
        "ERROR: Could not find a version that satisfies the requirement y==1 (from versions: none)",
        "ERROR: No matching distribution found for y==1"]
    long = "\n".join(f"error: line {n}" for n in range(40))
    assert _trim(long).splitlines()[-1] == "…" and len(_trim(long).splitlines()) == 13
    assert _trim("") == "(it printed nothing)"


# --- what a worker is given ---------------------------------------------------------------


def _deno_policy(tmp_path: Path, deps: Path, tool: str = "foo") -> Policy:
    extension = tmp_path / "ext"
    extension.mkdir(exist_ok=True)
    (extension / "index.ts").write_text("export const foo = () => 1;\n")
    (extension / "deno.json").write_text("{}")
    policy = Policy(runtime="deno", entry=str(extension / "index.ts"), function="foo",
                    extension_dir=str(extension), limits=Limits())
    deno.configure(policy, binary="/usr/bin/true", deno_dir=str(deps), tool=tool)
    return policy


def test_a_deno_worker_runs_against_the_lock_and_cannot_write_the_dependencies(
        tmp_path: Path) -> None:
    deps = tmp_path / "cache" / "deno" / NAME
    (deps / "npm" / "registry.npmjs.org").mkdir(parents=True)
    (deps / "deno.lock").write_text('{"version": "5"}')
    (deps / "dependencies.json").write_text('{"registry": "http://127.0.0.1:4873/"}')

    policy = _deno_policy(tmp_path, deps)

    argv = policy.deno["argv"]
    scratch = deps / "run" / "foo"
    assert f"--lock={deps / 'deno.lock'}" in argv and "--frozen" in argv
    assert "--no-lock" not in argv and "--cached-only" in argv
    assert "--node-modules-dir=none" in argv and f"--config={tmp_path / 'ext' / 'deno.json'}" in argv
    assert policy.deno["env"]["DENO_DIR"] == str(scratch)
    assert policy.deno["env"]["NPM_CONFIG_REGISTRY"] == "http://127.0.0.1:4873/"
    assert policy.runtime_write == [str(scratch)]
    assert str(deps) in policy.runtime_read
    assert os.readlink(scratch / "npm") == os.path.join("..", "..", "npm")
    assert not (scratch / "remote").exists()

    # Whatever a run left in place of the link is replaced at the next call.
    (scratch / "npm").unlink()
    (scratch / "npm" / "registry.npmjs.org" / "is-number").mkdir(parents=True)
    _deno_policy(tmp_path, deps)
    assert (scratch / "npm").is_symlink()
    # A sibling tool gets a scratch folder of its own.
    assert _deno_policy(tmp_path, deps, "bar").deno["env"]["DENO_DIR"] == str(deps / "run" / "bar")


def test_a_deno_worker_without_dependencies_runs_without_a_lock(tmp_path: Path) -> None:
    policy = _deno_policy(tmp_path, tmp_path / "cache" / "deno" / NAME)
    assert "--no-lock" in policy.deno["argv"] and "--frozen" not in policy.deno["argv"]
    assert "NPM_CONFIG_REGISTRY" not in policy.deno["env"]


def test_a_python_worker_imports_the_installed_requirements_first(tmp_path: Path) -> None:
    extension = tmp_path / "ext"
    extension.mkdir()
    (extension / "main.py").write_text("def foo(args, ctx):\n    return 1\n")
    common = dict(runtime="python", entry=extension / "main.py", function="foo",
                  extension_dir=extension, granted=[], cwd=tmp_path, limits=Limits(),
                  deno_dir=tmp_path / "cache" / "deno" / NAME)
    python_dir = tmp_path / "cache" / "python" / NAME
    assert build_policy(**common, python_dir=python_dir).python_path == []
    (python_dir / "site").mkdir(parents=True)
    policy = build_policy(**common, python_dir=python_dir)
    assert policy.python_path == [str(python_dir / "site")]
    assert str(python_dir / "site") in policy.runtime_read
    assert Policy.from_json(json.loads(json.dumps(policy.to_json()))).python_path == \
        policy.python_path
