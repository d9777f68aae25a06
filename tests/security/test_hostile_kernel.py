"""Tools that go after what Landlock does not cover — and fail.

File metadata outside every grant (mode, setuid, owner, times, extended attributes),
listing the world (stat, /proc, inotify), memory held by many processes, and the
dynamic loader run by hand. Each attempt must fail, be reported, and leave the host
healthy; the legitimate uses next to them (copying with metadata inside a write
grant, running a granted binary) must keep working.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time

import pytest
from extension_folders import write_extension

from processes import processes_with
from commands import workbench

from workbench.sandbox.process import UNUSED_ID

pytestmark = pytest.mark.security

LOADER = "/lib64/ld-linux-x86-64.so.2"

CODE = r'''
import ctypes, os, select, shutil, stat, subprocess, time

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def _raw(number, *args):
    result = libc.syscall(ctypes.c_long(number), *args)
    if result == -1:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return result

def meddle(args, ctx):
    """Every way of changing a file's metadata; each one must be refused."""
    path = args["path"]
    raw = path.encode()
    attempts = {
        "chmod": lambda: os.chmod(path, 0o4777),
        "chown": lambda: os.chown(path, 0, 0),
        "lchown": lambda: os.lchown(path, 0, 0),
        "utime": lambda: os.utime(path, (1, 1)),
        "setxattr": lambda: os.setxattr(path, "user.owned", b"yes"),
        "removexattr": lambda: os.removexattr(path, "user.kept"),
        "chmod-syscall": lambda: _raw(90, raw, 0o4777),
        "fchmodat2": lambda: _raw(452, -100, raw, 0o4777, 0),
        "utimes": lambda: _raw(235, raw, None),
        "futimesat": lambda: _raw(261, -100, raw, None),
        "utime-syscall": lambda: _raw(132, raw, None),
        "setxattrat": lambda: _raw(463, -100, raw, 0, b"user.owned", None, 0),
    }
    if args.get("fd"):
        def by_fd(change):
            fd = os.open(path, os.O_RDONLY)
            try:
                change(fd)
            finally:
                os.close(fd)
        attempts.update({
            "fchmod": lambda: by_fd(lambda fd: os.fchmod(fd, 0o4777)),
            "fchown": lambda: by_fd(lambda fd: os.fchown(fd, 0, 0)),
            "futimens": lambda: by_fd(lambda fd: os.utime(fd, (1, 1))),
            "fsetxattr": lambda: by_fd(lambda fd: os.setxattr(fd, "user.owned", b"yes")),
            "fremovexattr": lambda: by_fd(lambda fd: os.removexattr(fd, "user.kept")),
        })
    outcome = {}
    for name, attempt in attempts.items():
        try:
            attempt()
            outcome[name] = "done"
        except OSError as exc:
            outcome[name] = exc.strerror
    return outcome

def copy_inside(args, ctx):
    """What a tool with a write grant legitimately does with metadata."""
    target = os.path.join(args["folder"], "copy.txt")
    shutil.copy2(args["source"], target)
    with open(os.path.join(args["folder"], "new.txt"), "w") as handle:
        handle.write("created")
    os.chmod(target, 0o640)
    os.utime(target, (1000000000, 1000000000))
    os.setxattr(target, "user.note", b"mine")
    refused = {}
    for name, attempt in {"setuid": lambda: os.chmod(target, 0o4755),
                          "setgid": lambda: os.chmod(target, 0o2755),
                          "trusted-xattr": lambda: os.setxattr(target, "trusted.x", b"y"),
                          "security-xattr": lambda: os.setxattr(target, "security.capability", b"y"),
                          "give-away": lambda: os.chown(target, 4242, 4242)}.items():
        try:
            attempt()
            refused[name] = "done"
        except OSError as exc:
            refused[name] = exc.strerror
    fd = os.open(target, os.O_WRONLY)
    try:  # the descriptor forms, inside the grant
        os.fchmod(fd, 0o644)
        os.utime(fd, (1000000000, 1000000000))
        os.setxattr(fd, "user.by-fd", b"yes")
    finally:
        os.close(fd)
    info = os.stat(target)
    return {"mode": stat.S_IMODE(info.st_mode), "mtime": info.st_mtime, "refused": refused,
            "xattr": os.getxattr(target, "user.note").decode()}

def through_a_link(args, ctx):
    """A link made inside the write grant, to a file outside it, used by a relative name."""
    os.chdir(args["folder"])
    os.symlink(args["target"], "escape")
    outcome = {}
    for name, attempt in {"chmod": lambda: os.chmod("escape", 0o4777),
                          "utime": lambda: os.utime("escape", (1, 1)),
                          "setxattr": lambda: os.setxattr("escape", "user.owned", b"yes"),
                          "lchown": lambda: os.lchown("escape", 0, 0)}.items():
        try:
            attempt()
            outcome[name] = "done"
        except OSError as exc:
            outcome[name] = exc.strerror
    return outcome

def look(args, ctx):
    """Stat paths outside every grant; each must be unknown."""
    seen = {}
    for path in args["paths"]:
        try:
            info = os.stat(path)
            seen[path] = f"size {info.st_size} uid {info.st_uid}"
        except OSError as exc:
            seen[path] = exc.strerror
    return seen

def own_proc(args, ctx):
    try:
        visible = sorted(int(e) for e in os.listdir("/proc") if e.isdigit())
    except OSError as exc:
        visible = exc.strerror
    return {"pid": os.getpid(), "visible": visible}

def watch(args, ctx):
    """inotify and fanotify on a folder (granted or not)."""
    outcome = {}
    fd = libc.inotify_init1(0)
    if fd < 0:
        outcome["inotify"] = os.strerror(ctypes.get_errno())
    else:
        wd = libc.inotify_add_watch(fd, args["path"].encode(), 0xFFF)
        outcome["inotify"] = "watching" if wd >= 0 else os.strerror(ctypes.get_errno())
    fan = libc.fanotify_init(0, 0)
    outcome["fanotify"] = "watching" if fan >= 0 else os.strerror(ctypes.get_errno())
    return outcome

def hoard(args, ctx):
    """Four children, each under the per-process limit, together far over it."""
    read, write = os.pipe()
    children = []
    for _ in range(args["children"]):
        pid = os.fork()
        if pid == 0:
            try:
                os.close(read)
                block = bytearray(args["mib"] * 1024 * 1024)
                for i in range(0, len(block), 4096):
                    block[i] = 1
                os.write(write, b"x")
                time.sleep(30)
            finally:
                os._exit(0)
        children.append(pid)
    os.close(write)
    held = 0
    deadline = time.monotonic() + 30
    while held < len(children) and time.monotonic() < deadline:
        ready, _, _ = select.select([read], [], [], 0.1)
        if ready:
            held += len(os.read(read, 16))
        elif os.waitpid(-1, os.WNOHANG)[0]:
            break  # a child is gone: its memory was refused
    for pid in children:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    return {"held": held}

def nap(args, ctx):
    time.sleep(args.get("seconds", 60))
    return "rested"

def run(args, ctx):
    done = subprocess.run(args["argv"], capture_output=True, text=True, timeout=20)
    return {"code": done.returncode, "out": done.stdout, "err": done.stderr[-300:]}

def from_memory(args, ctx):
    """Copy a program into memory (a memfd, an unlinked file in a write grant) and have
    the loader run it from there, through /proc/self/fd."""
    out = {}
    with open(args["program"], "rb") as handle:
        data = handle.read()
    places = {"memfd": lambda: os.memfd_create("copy")}
    if args.get("folder"):
        def unlinked():
            path = os.path.join(args["folder"], "copy")
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o700)
            os.unlink(path)
            return fd
        places["unlinked"] = unlinked
    for name, make in places.items():
        try:
            fd = make()
            os.write(fd, data)
        except OSError as exc:
            out[name] = ["refused", exc.strerror]
            continue
        done = subprocess.run([args["loader"], f"/proc/self/fd/{fd}", "--version"], pass_fds=[fd],
                              capture_output=True, text=True, timeout=20)
        out[name] = [done.returncode, done.stdout[:60], done.stderr[-160:]]
        os.close(fd)
    return out

def map_exec(args, ctx):
    """Map each file executable, directly and by mprotect of a readable mapping."""
    import mmap
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    out = {}
    for path in args["paths"]:
        try:
            with open(path, "rb") as handle:
                mmap.mmap(handle.fileno(), 4096, flags=mmap.MAP_PRIVATE,
                          prot=mmap.PROT_READ | mmap.PROT_EXEC).close()
            mapped = "mapped"
        except OSError as exc:
            mapped = exc.strerror
        with open(path, "rb") as handle:
            address = libc.mmap(None, 4096, 1, 2, handle.fileno(), 0)  # PROT_READ, MAP_PRIVATE
        if libc.mprotect(address, 4096, 5) == 0:  # PROT_READ | PROT_EXEC
            protected = "executable"
        else:
            protected = os.strerror(ctypes.get_errno())
        out[path] = [mapped, protected]
    return out
'''

DENO_CODE = r'''
const enc = new TextEncoder();
const cstr = (s: string) => enc.encode(s + "\0");

function libc() {
  return Deno.dlopen("libc.so.6", {
    chmod: { parameters: ["buffer", "u32"], result: "i32" },
    utimes: { parameters: ["buffer", "pointer"], result: "i32" },
    setxattr: { parameters: ["buffer", "buffer", "buffer", "usize", "i32"], result: "i32" },
    inotify_init1: { parameters: ["i32"], result: "i32" },
    fanotify_init: { parameters: ["u32", "u32"], result: "i32" },
    stat: { parameters: ["buffer", "buffer"], result: "i32" },
  }).symbols;
}

export function meddle(args: { path: string }) {
  const c = libc();
  const p = cstr(args.path);
  const value = enc.encode("yes");
  return {
    chmod: c.chmod(p, 0o4777),
    utimes: c.utimes(p, null),
    setxattr: c.setxattr(p, cstr("user.owned"), value, BigInt(value.length), 0),
  };
}

export async function denoChmod(args: { path: string }) {
  await Deno.chmod(args.path, 0o4777);
  return "changed";
}

export function look(args: { paths: string[] }) {
  const c = libc();
  const out: Record<string, number> = {};
  for (const path of args.paths) out[path] = c.stat(cstr(path), new Uint8Array(256));
  return out;
}

export function watch() {
  const c = libc();
  return { inotify: c.inotify_init1(0), fanotify: c.fanotify_init(0, 0) };
}

export async function denoWatch(args: { path: string }) {
  const watcher = Deno.watchFs(args.path);
  watcher.close();
  return "watched";
}

export async function copyInside(args: { source: string; folder: string }) {
  const target = args.folder + "/copy.txt";
  await Deno.copyFile(args.source, target);
  await Deno.chmod(target, 0o640);
  await Deno.utime(target, 1000000000, 1000000000);
  try {
    await Deno.chmod(target, 0o4755);
    return "setuid";
  } catch (_e) {
    return "copied";
  }
}

export async function run(args: { argv: string[] }) {
  const out = await new Deno.Command(args.argv[0], { args: args.argv.slice(1) }).output();
  return { code: out.code, out: new TextDecoder().decode(out.stdout) };
}

export function load(args: { paths: string[] }) {
  const out: Record<string, string> = {};
  for (const path of args.paths) {
    try {
      Deno.dlopen(path, {}).close();
      out[path] = "loaded";
    } catch (error) {
      out[path] = (error as Error).message.slice(0, 200);
    }
  }
  return out;
}
'''

PY_TOOLS = ("meddle", "copy_inside", "through_a_link", "look", "own_proc", "watch", "hoard", "nap", "run",
            "map_exec", "from_memory")
DENO_TOOLS = ("meddle", "denoChmod", "look", "watch", "denoWatch", "copyInside", "run", "load")


def grant(kind: str, *paths) -> dict:
    key = "run" if kind == "run" else kind
    field = "binary" if kind == "run" else "path"
    return {key: [{field: str(p), "reason": "The test."} for p in paths]}


def declare(lab, specs: dict, *, runtime: str = "python", name: str = "kernel") -> None:
    tools = {tool: {} for tool in (PY_TOOLS if runtime == "python" else DENO_TOOLS)}
    tools.update({tool: {"permissions": perms} for tool, perms in specs.items()})
    lab.extension(name, CODE if runtime == "python" else DENO_CODE, tools, runtime=runtime)


def snapshot(path) -> tuple:
    info = os.stat(path)
    return (info.st_mode, info.st_uid, info.st_gid, info.st_mtime_ns,
            sorted((k, os.getxattr(path, k)) for k in os.listxattr(path)))


@pytest.fixture
def victim(tmp_path):
    """A file the tools are never granted, with an extended attribute to remove."""
    path = tmp_path / "outside" / "precious.txt"
    path.parent.mkdir()
    path.write_text("not yours")
    path.chmod(0o644)
    os.setxattr(path, "user.kept", b"kept")
    return path


async def healthy(lab):
    outcome = await lab.host.tools.call("word_count", {"text": "still here"})
    assert outcome.ok and outcome.result["words"] == 2


# 1. File metadata outside every grant.

async def test_python_cannot_change_metadata_outside_its_grants(lab, victim, tmp_path):
    readable = tmp_path / "readable"
    readable.mkdir()
    shutil.copy2(victim, readable / "granted-read.txt")
    os.setxattr(readable / "granted-read.txt", "user.kept", b"kept")
    (tmp_path / "mine").mkdir()
    declare(lab, {"meddle": {**grant("read", readable), **grant("write", tmp_path / "mine")}})
    for target, by_fd in ((victim, False), (readable / "granted-read.txt", True)):
        before = snapshot(target)
        outcome = await lab.call("meddle", {"path": str(target), "fd": by_fd})
        assert outcome.ok, outcome.error
        assert outcome.result and all(v != "done" for v in outcome.result.values()), outcome.result
        assert "Operation not permitted" in outcome.result.values() or \
            "Function not implemented" in outcome.result.values()
        assert snapshot(target) == before
    await healthy(lab)


async def test_python_keeps_metadata_inside_its_write_grant(lab, tmp_path):
    source = tmp_path / "src" / "source.txt"
    source.parent.mkdir()
    source.write_text("copy me")
    source.chmod(0o751)
    os.utime(source, (1234567890, 1234567890))
    folder = tmp_path / "dest"
    folder.mkdir()
    declare(lab, {"copy_inside": {**grant("read", source.parent), **grant("write", folder)}})
    outcome = await lab.call("copy_inside", {"source": str(source), "folder": str(folder)})
    assert outcome.ok, outcome.error
    assert outcome.result["mode"] == 0o644 and outcome.result["mtime"] == 1000000000
    assert outcome.result["xattr"] == "mine"
    assert all(v != "done" for v in outcome.result["refused"].values()), outcome.result
    copied = folder / "copy.txt"
    assert copied.read_text() == "copy me" and not os.stat(copied).st_mode & 0o6000
    assert os.getxattr(copied, "user.by-fd") == b"yes"
    assert (folder / "new.txt").read_text() == "created"
    await healthy(lab)


async def test_python_cannot_reach_outside_through_a_link_in_its_write_grant(lab, victim, tmp_path):
    folder = tmp_path / "dest"
    folder.mkdir()
    declare(lab, {"through_a_link": grant("write", folder)})
    before = snapshot(victim)
    outcome = await lab.call("through_a_link", {"folder": str(folder), "target": str(victim)})
    assert outcome.ok, outcome.error
    assert all(v != "done" for k, v in outcome.result.items() if k != "lchown"), outcome.result
    assert snapshot(victim) == before and os.path.islink(folder / "escape")
    await healthy(lab)


async def test_deno_cannot_change_metadata_outside_its_grants(lab, victim):
    declare(lab, {"meddle": {"ffi": [{"reason": "The test."}]}}, runtime="deno")
    before = snapshot(victim)
    outcome = await lab.call("meddle", {"path": str(victim)})
    assert outcome.ok, outcome.error
    assert outcome.result == {"chmod": -1, "utimes": -1, "setxattr": -1}
    denied = await lab.call("denoChmod", {"path": str(victim)})
    assert not denied.ok and "NotCapable" in denied.error["message"] or "write access" in denied.error["message"]
    assert snapshot(victim) == before
    await healthy(lab)


async def test_deno_keeps_metadata_inside_its_write_grant(lab, tmp_path):
    source = tmp_path / "src" / "source.txt"
    source.parent.mkdir()
    source.write_text("copy me")
    folder = tmp_path / "dest"
    folder.mkdir()
    declare(lab, {"copyInside": {**grant("read", source.parent), **grant("write", folder)}}, runtime="deno")
    outcome = await lab.call("copyInside", {"source": str(source), "folder": str(folder)})
    assert outcome.ok, outcome.error
    copied = folder / "copy.txt"
    assert outcome.result == "copied" and copied.read_text() == "copy me"
    assert (os.stat(copied).st_mode & 0o7777, os.stat(copied).st_mtime) == (0o640, 1000000000)
    await healthy(lab)


# 2. Listing the world.

async def test_python_cannot_list_the_world(lab, victim, tmp_path):
    granted = tmp_path / "granted"
    granted.mkdir()
    declare(lab, {"watch": grant("read", granted)})
    paths = [str(victim), str(victim.parent), "/root/.bashrc", "/etc/shadow", "/etc/passwd",
             "/etc/hostname", "/usr/bin/sudo", "/var/log", f"/proc/{os.getpid()}"]
    outcome = await lab.call("look", {"paths": paths})
    assert outcome.ok, outcome.error
    assert set(outcome.result.values()) <= {"No such file or directory", "Permission denied"}, outcome.result
    proc = await lab.call("own_proc", {})
    assert proc.ok, proc.error
    visible = proc.result["visible"]
    assert proc.result["pid"] < 10 and (isinstance(visible, str) or os.getpid() not in visible), proc.result
    for folder in (granted, victim.parent):
        watched = await lab.call("watch", {"path": str(folder)})
        assert watched.ok and watched.result == {"inotify": "Operation not permitted",
                                                 "fanotify": "Operation not permitted"}, watched.result
    await healthy(lab)


async def test_deno_cannot_list_the_world(lab, victim):
    declare(lab, {"look": {"ffi": [{"reason": "The test."}]}, "watch": {"ffi": [{"reason": "The test."}]}}, runtime="deno")
    outcome = await lab.call("look", {"paths": [str(victim), "/root/.bashrc", "/etc/shadow"]})
    assert outcome.ok and set(outcome.result.values()) == {-1}, outcome.result
    watched = await lab.call("watch", {})
    assert watched.ok and watched.result == {"inotify": -1, "fanotify": -1}, watched.result
    refused = await lab.call("denoWatch", {"path": str(victim.parent)})
    assert not refused.ok and "read access" in refused.error["message"], refused.error
    await healthy(lab)


# 13a. Memory per worker, not per process.

async def test_children_share_one_memory_bound(lab):
    from workbench.sandbox.cgroup import memory_root
    from workbench.sandbox.doctor import probe

    declare(lab, {"hoard": grant("run", "/bin/true")})
    lab.host.sandbox.limits.memory_mb = 384
    if memory_root() is None:
        # This host cannot make a memory cgroup: doctor says so, and a tool that may
        # start processes is refused (tests/security/test_memory_bound.py).
        [check] = [c for c in probe().checks if c.name == "memory-cgroup"]
        assert not check.ok and "refused" in check.detail
        outcome = await lab.call("hoard", {"children": 1, "mib": 512})
        assert not outcome.ok and outcome.error["kind"] == "unavailable", outcome.result
        return
    outcome = await lab.call("hoard", {"children": 4, "mib": 200})
    assert not (outcome.ok and outcome.result["held"] == 4), outcome.result
    small = await lab.call("hoard", {"children": 1, "mib": 64})
    assert small.ok and small.result == {"held": 1}, small.error
    await healthy(lab)


# 13b. The dynamic loader runs granted binaries only.

async def test_python_loader_runs_only_granted_binaries(lab, tmp_path):
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    shutil.copy2(shutil.which("echo"), shelf / "echo")
    declare(lab, {"run": {**grant("run", shutil.which("echo")), **grant("read", shelf)}})
    granted = await lab.call("run", {"argv": [shutil.which("echo"), "granted"]})
    assert granted.ok and granted.result["out"] == "granted\n", granted.error or granted.result
    for argv in ([LOADER, str(shelf / "echo"), "escaped"], [LOADER, "/usr/bin/id"],
                 [str(shelf / "echo"), "escaped"]):
        outcome = await lab.call("run", {"argv": argv})
        assert not outcome.ok or (outcome.result["code"] != 0 and "escaped" not in outcome.result["out"]), \
            (argv, outcome.result)
    await healthy(lab)


async def test_deno_loader_runs_only_granted_binaries(lab, tmp_path):
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    shutil.copy2(shutil.which("echo"), shelf / "echo")
    declare(lab, {"run": {**grant("run", shutil.which("echo")), **grant("read", shelf)}}, runtime="deno")
    granted = await lab.call("run", {"argv": [shutil.which("echo"), "granted"]})
    assert granted.ok and granted.result["out"] == "granted\n", granted.error
    outcome = await lab.call("run", {"argv": [LOADER, str(shelf / "echo"), "escaped"]})
    assert not outcome.ok and "run access" in outcome.error["message"], outcome.result
    await healthy(lab)


# 13c. Programs that live in library folders: the loader cannot map them either.

KNOWN_LIBRARY_PROGRAMS = ("/usr/lib/git-core/git", "/usr/lib/jvm/java-17-openjdk-amd64/bin/java",
                          "/usr/lib/google-cloud-sdk/platform/bundledpythonunix/bin/python3",
                          "/usr/lib/openssh/ssh-keysign", "/usr/lib/x86_64-linux-gnu/libexec/kf5/kioslave5")


def library_programs() -> list[str]:
    """ELF programs living in a library folder of this machine (real paths)."""
    from workbench.sandbox.libraries import read_elf

    found = []
    for path in KNOWN_LIBRARY_PROGRAMS:
        elf = read_elf(path) if os.path.isfile(path) else None
        if elf is not None and elf.program:
            found.append(os.path.realpath(path))
    assert found, "no program in a library folder here to try"
    return found


def a_libc() -> str:
    return os.path.realpath("/lib/x86_64-linux-gnu/libc.so.6")


async def test_python_loader_cannot_run_programs_of_library_folders(lab):
    from workbench.sandbox.deno import deno_binary

    echo = shutil.which("echo")
    declare(lab, {"run": grant("run", echo), "map_exec": grant("run", echo)})
    granted = await lab.call("run", {"argv": [echo, "granted"]})
    assert granted.ok and granted.result["out"] == "granted\n", granted.error or granted.result
    programs = library_programs()
    runtime = [os.path.realpath(sys.executable), os.path.realpath(deno_binary())]
    for program in [*programs, *runtime]:
        for argv in ([LOADER, program, "--version"], [program, "--version"]):
            outcome = await lab.call("run", {"argv": argv})
            assert not outcome.ok or (outcome.result["code"] != 0 and outcome.result["out"] == ""), \
                (argv, outcome.result)
        if program in programs:
            outcome = await lab.call("run", {"argv": [LOADER, program, "--version"]})
            assert outcome.ok and "failed to map segment" in outcome.result["err"], outcome.result
    mapped = await lab.call("map_exec", {"paths": [*programs, a_libc()]})
    assert mapped.ok, mapped.error
    for program in programs:
        assert mapped.result[program] == ["Operation not permitted", "Permission denied"], mapped.result
    # What the runtime and the granted binary need is still mapped as it must be.
    assert mapped.result[a_libc()] == ["mapped", "executable"], mapped.result
    await healthy(lab)


async def test_python_loader_cannot_run_a_program_copied_into_memory(lab, tmp_path):
    echo = shutil.which("echo")
    folder = tmp_path / "scratch"
    folder.mkdir()
    declare(lab, {"from_memory": {**grant("run", echo), **grant("write", folder)}})
    outcome = await lab.call("from_memory", {"program": library_programs()[0], "loader": LOADER,
                                             "folder": str(folder)})
    assert outcome.ok, outcome.error
    # A memfd is refused (it is on no noexec mount); a file in the write grant is
    # refused or, bound noexec, cannot be mapped.
    assert outcome.result["memfd"] == ["refused", "Operation not permitted"], outcome.result
    for place, found in outcome.result.items():
        assert found[0] == "refused" or (found[0] != 0 and not found[1]), (place, outcome.result)
    await healthy(lab)


async def test_deno_loader_cannot_run_programs_of_library_folders(lab):
    sh = os.path.realpath("/bin/sh")
    declare(lab, {"run": grant("run", sh), "load": {"ffi": [{"reason": "The test."}]}}, runtime="deno")
    programs = library_programs()
    for program in programs:
        script = f"{LOADER} {program} --version; echo \"loader $?\"; {program} --version; echo \"direct $?\""
        outcome = await lab.call("run", {"argv": [sh, "-c", script]})
        assert outcome.ok, outcome.error
        lines = outcome.result["out"].splitlines()
        assert len(lines) == 2 and lines[0].startswith("loader ") and lines[1].startswith("direct ") \
            and "loader 0" not in lines and "direct 0" not in lines, outcome.result
    loaded = await lab.call("load", {"paths": [*programs, a_libc()]})
    assert loaded.ok, loaded.error
    for program in programs:
        assert loaded.result[program] != "loaded", loaded.result
    assert loaded.result[a_libc()] == "loaded", loaded.result
    await healthy(lab)


REAL_PROGRAMS = {
    # iconv loads its conversion from gconv at run time; curl and openssl need a long
    # closure (TLS, compression, Kerberos); git its own; sh runs iconv in a pipe.
    "git": (["git", "--version"], "git version"),
    "curl": (["curl", "--version"], "curl "),
    "openssl": (["openssl", "version"], "OpenSSL"),
    "sqlite3": (["sqlite3", ":memory:", "select 6*7"], "42"),
    "iconv": (["sh", "-c", "printf 'caf\\303\\251' | iconv -f UTF-8 -t UTF-7"], "caf+AOk-"),
}


@pytest.mark.parametrize("runtime", ["python", "deno"])
async def test_real_programs_run_over_noexec_library_folders(lab, runtime):
    programs = {name: spec for name, spec in REAL_PROGRAMS.items() if shutil.which(name)}
    assert "git" in programs and "iconv" in programs, programs
    binaries = sorted({shutil.which(argv[0]) for argv, _ in programs.values()} | {shutil.which("iconv")})
    declare(lab, {"run": grant("run", *binaries)}, runtime=runtime)
    for name, (argv, expected) in programs.items():
        outcome = await lab.call("run", {"argv": [shutil.which(argv[0]), *argv[1:]]})
        assert outcome.ok and outcome.result["code"] == 0 and expected in outcome.result["out"], \
            (name, outcome.error or outcome.result)
    await healthy(lab)


# 1. The identity a worker runs as, and that nothing of it outlives the host.

def uids_of(pids: list[int]) -> set[int]:
    found = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as handle:
                found.update(int(line.split()[1]) for line in handle if line.startswith("Uid:"))
        except OSError:
            continue
    return found


async def test_a_worker_without_path_grants_is_nobody_and_owns_nothing(lab, victim):
    declare(lab, {})
    call = asyncio.ensure_future(lab.call("nap", {"seconds": 30}))
    marker = f"\0{os.getpid()}\0"
    expected = UNUSED_ID if os.getuid() == 0 else os.getuid()
    # The worker is the process of that identity that stays: a probe of the host's own
    # (doctor's private-root check, which also names the host) takes it for a moment.
    # The bound only decides how long a failing test takes.
    deadline = time.monotonic() + 90
    seen: set[int] = set()
    while not call.done() and time.monotonic() < deadline:
        now = {pid for pid in processes_with(marker) if uids_of([pid]) == {expected}}
        if now & seen:
            break
        seen = now
        await asyncio.sleep(0.1)
    assert not call.done(), call.result()
    workers = uids_of(processes_with(marker))
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert expected in workers, workers
    if os.getuid() == 0:
        assert workers == {0, UNUSED_ID}  # the zygote and supervisor are the host's; the worker is not
    await healthy(lab)


def test_no_worker_outlives_a_killed_host(tmp_path):
    """Whatever identity its worker has, killing the host mid-call ends every process."""
    folder = write_extension(tmp_path / "sleepy", "sleepy", ["nap"],
                             code="import time\ndef nap(args, ctx):\n    time.sleep(60)\n")
    env = dict(os.environ)
    assert workbench("ext", "install", str(folder), "--yes").returncode == 0
    errors = tmp_path / "stderr"
    with errors.open("wb") as sink:
        host = subprocess.Popen([sys.executable, "-m", "workbench", "call", "nap", "--grant-all"], env=env,
                                stdout=subprocess.DEVNULL, stderr=sink)
    marker = f"\0{host.pid}\0"

    expected = UNUSED_ID if os.getuid() == 0 else os.getuid()

    def workers() -> set[int]:  # with the zygote and supervisor, the worker's two processes, as their own user
        found = processes_with(marker)
        return {pid for pid in found if uids_of([pid]) == {expected}} if len(found) >= 4 else set()

    # The worker is the process of that identity that stays: the runner's probe of the
    # sandbox, at the first call, takes it for a moment. What was seen is what is
    # asserted (looking again could find the probe gone). The bound only decides how
    # long a failing test takes: a loaded machine starts slowly.
    deadline = time.monotonic() + 90
    seen: set[int] = set()
    stayed: set[int] = set()
    while not stayed and host.poll() is None and time.monotonic() < deadline:
        now = workers()
        stayed, seen = now & seen, now
        if not stayed:
            time.sleep(0.05)
    found = processes_with(marker)
    state = "still running" if host.poll() is None else f"exited {host.returncode}"
    said = errors.read_text(errors="replace")[-2000:]
    assert stayed, f"the tool never started: host {state}, processes {found} as {uids_of(found)}, stderr {said!r}"
    host.kill()
    host.wait()
    deadline = time.monotonic() + 10
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(marker) == []
