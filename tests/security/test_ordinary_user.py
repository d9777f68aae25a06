"""The same walls when workbench runs as an ordinary user, not root.

On a root host the real ``workbench`` command runs as uid 65534 (``setpriv``), with the
system's own ``python3`` (a venv of it whose ``.pth`` names this checkout and its
packages: root's interpreter is out of an ordinary user's reach), so the Python
runtime is the system's — its prefix ``/usr``, its extension modules inside
``/usr/lib``. On a host that is not root it runs as itself. Either way the memory
cgroup is made missing (``WORKBENCH_CGROUP_ROOT`` at an empty folder): a tool granted
``run`` is refused until per-process bounds are accepted, and then, from Python and
from Deno, the granted ``git`` runs while the loader cannot run ``git`` from its library
folder nor the interpreter."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.security

NOBODY = 65534
LOADER = "/lib64/ld-linux-x86-64.so.2"
LIBRARY_GIT = "/usr/lib/git-core/git"

PY_ENTRY = '''
import sqlite3, ssl, subprocess, sys

def probe(args, ctx):
    out = {"imports": [ssl.OPENSSL_VERSION.split()[0], sqlite3.sqlite_version.count(".")]}
    for name, argv in args["argvs"].items():
        done = subprocess.run(argv, capture_output=True, text=True)
        out[name] = [done.returncode, done.stdout.strip(), done.stderr.strip()[-120:]]
    return out
'''

TS_ENTRY = '''
export async function probe(args: { argvs: Record<string, string[]> }) {
  const out: Record<string, unknown[]> = {};
  for (const [name, argv] of Object.entries(args.argvs)) {
    const done = await new Deno.Command(argv[0], { args: argv.slice(1) }).output();
    out[name] = [done.code, new TextDecoder().decode(done.stdout).trim(),
                 new TextDecoder().decode(done.stderr).trim().slice(-120)];
  }
  return out;
}
'''


@pytest.fixture
def place():
    """A folder an ordinary user can reach and write (a test's tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="workbench-ordinary-"))
    folder.chmod(0o777)
    (folder / "no-cgroup").mkdir(mode=0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def interpreter(place: Path) -> tuple[list[str], str]:
    """How to run workbench as an ordinary user, and the interpreter that runs it."""
    if os.getuid() != 0:
        return [], sys.executable
    system = "/usr/bin/python3"
    version = subprocess.run([system, "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert version == str(sys.version_info[:2]), f"{system} is {version}: its packages would not load"
    user = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    venv = place / "venv"
    subprocess.run([*user, system, "-m", "venv", "--without-pip", str(venv)], check=True,
                   env={"PATH": "/usr/bin:/bin", "HOME": str(place)})
    site = next((venv / "lib").glob("python3*/site-packages"))
    import workbench

    ours = [os.path.dirname(os.path.dirname(workbench.__file__)),
            *(p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix))]
    (site / "workbench-checkout.pth").write_text("\n".join(ours) + "\n")
    from workbench.sandbox.deno import deno_binary

    (venv / "bin" / "deno").symlink_to(deno_binary())  # where the `deno` package looks
    return user, str(venv / "bin" / "python")


def test_an_ordinary_user_gets_the_same_walls(place):
    user, python = interpreter(place)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(place), "WORKBENCH_HOME": str(place / "home"),
           "WORKBENCH_CGROUP_ROOT": str(place / "no-cgroup"), "LANG": "C.UTF-8"}

    def workbench(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*user, python, "-m", "workbench", *args], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=180, env=env, cwd=place)

    git, sh = shutil.which("git"), os.path.realpath("/bin/sh")
    for runtime, binary in (("python", git), ("deno", sh)):
        folder = place / f"probe-{runtime}"
        folder.mkdir()
        entry = "main.py" if runtime == "python" else "main.ts"
        (folder / entry).write_text(PY_ENTRY if runtime == "python" else TS_ENTRY)
        (folder / "package.json").write_text(json.dumps({"name": f"probe-{runtime}", "version": "1.0.0"}))
        runs = [{"binary": binary, "reason": "The test."}] + ([{"binary": git, "reason": "The test."}]
                                                              if runtime == "deno" else [])
        (folder / "loca.json").write_text(json.dumps({
            "name": f"probe-{runtime}", "displayName": "probe", "description": "Probes.", "entry": entry,
            "tools": [{"name": "probe", "description": "Probe.", "function": "probe",
                       "parameters": {"type": "object"}, "permissions": {"run": runs}}]}))
        os.chmod(folder, 0o777)
        installed = workbench("ext", "install", str(folder), "--yes")
        assert installed.returncode == 0, installed.stdout + installed.stderr

    real_python = os.path.realpath(python)
    py_args = {"argvs": {"git": [git, "--version"], "loader": [LOADER, LIBRARY_GIT, "--version"],
                         "interpreter": [LOADER, real_python, "-c", "print('escaped')"]}}
    refused = workbench("call", "probe-python.probe", "--args", json.dumps(py_args), "--grant-all", "--json")
    assert refused.returncode != 0 and "memory-cgroup" in refused.stdout, refused.stdout + refused.stderr

    assert workbench("config", "set", "sandbox.per_process_memory", "true").returncode == 0
    ran = workbench("call", "probe-python.probe", "--args", json.dumps(py_args), "--grant-all", "--json")
    outcome = json.loads(ran.stdout)
    assert ran.returncode == 0 and outcome["ok"], ran.stdout + ran.stderr
    result = outcome["result"]
    assert result["imports"] == ["OpenSSL", 2], result
    assert result["git"][0] == 0 and result["git"][1].startswith("git version"), result
    for name in ("loader", "interpreter"):
        code, out, err = result[name]
        assert code != 0 and out == "" and "failed to map segment" in err, (name, result)

    script = f"{LOADER} {LIBRARY_GIT} --version; echo \"loader $?\""
    ts_args = {"argvs": {"git": [git, "--version"], "loader": [sh, "-c", script]}}
    ran = workbench("call", "probe-deno.probe", "--args", json.dumps(ts_args), "--grant-all", "--json")
    outcome = json.loads(ran.stdout)
    assert ran.returncode == 0 and outcome["ok"], ran.stdout + ran.stderr
    result = outcome["result"]
    assert result["git"][0] == 0 and result["git"][1].startswith("git version"), result
    assert result["loader"][1].startswith("loader ") and result["loader"][1] != "loader 0", result
    assert "failed to map segment" in result["loader"][2], result
