"""What the sandbox can enforce on this machine, found by trying it.

``probe()`` forks throwaway children that make each move a worker makes — new PID
and network namespaces, its own identity (a user namespace, an unused uid on a root
host), a private root with its own ``/proc`` and ``noexec`` mounts, Landlock, the
seccomp filter (metadata calls, inotify) — and reports which worked.
``workbench doctor`` prints the result; the host refuses to run tools when a
required layer is missing, rather than running them with less than was promised.
"""

from __future__ import annotations

import ctypes
import errno
import json
import mmap
import os
import platform
import socket
import tempfile
from dataclasses import asdict, dataclass, field

from workbench.sandbox import landlock, seccomp
from workbench.sandbox._libc import CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWUSER, libc, unshare
from workbench.sandbox.deno import deno_binary


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = True


@dataclass
class Report:
    """The probe's findings; ``ready`` when every required layer works."""

    checks: list[Check] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        return all(c.ok for c in self.checks if c.required)

    def problems(self) -> list[str]:
        return [f"{c.name}: {c.detail}" for c in self.checks if c.required and not c.ok]

    def to_json(self) -> dict:
        return {"ready": self.ready, "checks": [asdict(c) for c in self.checks]}


def _in_child(test) -> tuple[bool, str]:
    """Run ``test`` in a forked child; ``(ok, detail)`` from what it reports."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            detail = test() or "works"
            payload = {"ok": True, "detail": detail}
        except BaseException as exc:
            payload = {"ok": False, "detail": f"{type(exc).__name__}: {exc}"}
        os.write(write, json.dumps(payload).encode())
        os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 4096):
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    try:
        payload = json.loads(data)
    except json.JSONDecodeError:
        return False, "the probe crashed"
    return bool(payload["ok"]), str(payload["detail"])


def _namespaces() -> str:
    unshare(CLONE_NEWUSER)
    unshare(CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWNS)
    return "user, PID, network and mount namespaces"


def _landlock() -> str:
    from workbench.sandbox._libc import PR_SET_NO_NEW_PRIVS, prctl

    prctl(PR_SET_NO_NEW_PRIVS, 1)  # as a worker has (or its capabilities in its namespace)
    rules = landlock.Ruleset()
    rules.allow("/", landlock.READ)
    abi = rules.restrict()
    return f"ABI {abi}"


def _seccomp() -> str:
    seccomp.load(seccomp.build_filter(allow_processes=False))
    try:
        os.setsid()
    except PermissionError:
        return f"filter loaded ({platform.machine()})"
    raise RuntimeError("the filter did not refuse setsid")


def _proxy() -> tuple[bool, str]:
    """The proxy's address rules judge the tricky forms internal (no child needed)."""
    import ipaddress

    from workbench.sandbox.proxy import MAX_CONCURRENT, MAX_CONNECTIONS, internal

    missed = [a for a in ("127.0.0.1", "::ffff:127.0.0.1", "100.64.0.1", "2002:7f00:1::", "64:ff9b::1",
                          "fd00::1", "169.254.169.254", "::") if internal(ipaddress.ip_address(a)) is None]
    if missed:
        return False, f"internal addresses judged public: {', '.join(missed)}"
    return True, ("names resolved once on the host, every address checked against the internal "
                  f"ranges, internal ones only by literal grant; {MAX_CONCURRENT} connections at once "
                  f"and {MAX_CONNECTIONS} per call")


def _metadata() -> str:
    """The filter refuses metadata calls and watches, and can hand them to a supervisor."""
    with tempfile.NamedTemporaryFile() as handle:
        seccomp.load(seccomp.build_filter(allow_processes=False))
        try:
            os.chmod(handle.name, 0o4777)
        except PermissionError:
            pass
        else:
            raise RuntimeError("the filter did not refuse chmod")
        if libc.inotify_init1(0) >= 0 or ctypes.get_errno() != errno.EPERM:
            raise RuntimeError("the filter did not refuse inotify")
        listener = seccomp.load(seccomp.build_filter(allow_processes=False, notify_metadata=True),
                                listener=True)
        os.close(listener)
    return "chmod, chown, utime and xattr calls refused, or made by the supervisor inside write grants"


def _maps_executable(path: str) -> bool:
    with open(path, "rb") as handle:
        try:
            mmap.mmap(handle.fileno(), min(4096, os.fstat(handle.fileno()).st_size) or 1,
                      flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_EXEC).close()
            return True
        except PermissionError:
            return False


def _private_root() -> str:
    """A worker's identity and root, made as a worker makes them; their findings as JSON."""
    from workbench.sandbox import process, userns
    from workbench.sandbox.policy import Policy, python_runtime_paths

    policy = Policy(runtime="python", entry="", function="", extension_dir="/nonexistent",
                    runtime_read=python_runtime_paths())
    bound = set(process.executable_libraries(policy))
    libc_path = next((p for p in sorted(bound) if os.path.basename(p).startswith("libc.so")), None)
    unbound = next((e.path for e in os.scandir(os.path.realpath("/usr/lib"))
                    if e.is_file(follow_symlinks=False) and e.path not in bound), None)
    owner = process.outside_identity(policy)
    supervisor = os.getpid()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        try:
            ours.close()
            userns.enter_user_namespace(owner, theirs, supervisor)
            unshare(CLONE_NEWNS | CLONE_NEWPID)
            inner = os.fork()
            if inner == 0:
                findings = {}
                try:
                    process.private_root(policy)
                    findings["root"] = not any(os.path.lexists(p) for p in ("/etc/passwd", "/etc/hostname"))
                    findings["proc"] = sorted(int(e) for e in os.listdir("/proc") if e.isdigit()) == [1]
                    findings["noexec"] = not _maps_executable("/etc/ld.so.cache")
                    # A file of a library folder the worker was not given is noexec too;
                    # libc, given to every worker, is not.
                    findings["libraries"] = (unbound is None or not _maps_executable(unbound)) and \
                        (libc_path is None or _maps_executable(libc_path))
                    findings["bound"] = len(bound)
                    with open("/proc/self/uid_map") as handle:
                        findings["uid"] = int(handle.read().split()[1])
                except BaseException as exc:
                    findings["error"] = f"{type(exc).__name__}: {exc}"
                theirs.send(json.dumps(findings).encode())
                os._exit(0)
            os.waitpid(inner, 0)
        finally:
            os._exit(0)
    theirs.close()
    try:
        userns.map_child(pid, owner, ours)
        data = ours.recv(4096)
    finally:
        os.waitpid(pid, 0)
        ours.close()
    if not data:
        raise RuntimeError("the probe's worker ended early")
    return data.decode()


def _overlay() -> str:
    """What a shell worker does to its project: in a user and mount namespace of its
    own, a bounded ``tmpfs`` upper layer and an overlay on a folder, written through."""
    from workbench.sandbox import mounts

    with tempfile.TemporaryDirectory(prefix="workbench-overlay-") as folder:
        lower, merged, held = (os.path.join(folder, n) for n in ("lower", "merged", "held"))
        for path in (lower, merged, held):
            os.mkdir(path)
        with open(os.path.join(lower, "kept"), "w") as handle:
            handle.write("lower")
        from workbench.sandbox.userns import map_user

        uid, gid = os.getuid(), os.getgid()
        unshare(CLONE_NEWUSER)
        map_user(os.getpid(), uid, gid)
        unshare(CLONE_NEWNS)
        mounts._mount(None, "/", None, mounts.MS_REC | mounts.MS_PRIVATE)
        mounts._mount("tmpfs", held, "tmpfs", mounts.MS_NOSUID | mounts.MS_NODEV, "size=1m,mode=0700")
        os.mkdir(held + "/upper")
        os.mkdir(held + "/work")
        mounts._mount("overlay", merged, "overlay", mounts.MS_NOSUID | mounts.MS_NODEV,
                      f"lowerdir={lower},upperdir={held}/upper,workdir={held}/work,userxattr")
        with open(os.path.join(merged, "made"), "w") as handle:
            handle.write("upper")
        os.unlink(os.path.join(merged, "kept"))
        if os.path.exists(os.path.join(lower, "made")) or not os.path.exists(os.path.join(lower, "kept")):
            raise OSError("the overlay wrote through to the folder below it")
        if not os.path.exists(held + "/upper/made"):
            raise OSError("the overlay's upper layer did not receive the write")
        for path in (merged, held):
            libc.umount2(os.fsencode(path), mounts.MNT_DETACH)
    return ("a shell command's project is an overlay with a bounded tmpfs upper layer, in "
            "its own user namespace")


def probe() -> Report:
    """Try each layer in a throwaway child process."""
    report = Report()
    abi = landlock.abi_version()
    ok, detail = _in_child(_landlock) if abi else (False, "the kernel has no Landlock")
    report.checks.append(Check("landlock", ok, detail))
    report.checks.append(Check("landlock-network", abi >= 4,
                               "TCP ports are filtered" if abi >= 4 else
                               f"ABI {abi} cannot filter TCP ports (needs 4)"))
    report.checks.append(Check("landlock-scopes", abi >= 6,
                               "signals and abstract sockets are scoped" if abi >= 6 else
                               f"ABI {abi} cannot scope signals (needs 6); seccomp and PID "
                               "namespaces still apply", required=False))
    if seccomp.supported():
        ok, detail = _in_child(_seccomp)
    else:
        ok, detail = False, f"no filter for the {platform.machine()} architecture"
    report.checks.append(Check("seccomp", ok, detail))
    ok, detail = _in_child(_namespaces)
    report.checks.append(Check("namespaces", ok, detail))
    report.checks.append(Check("network-proxy", *_proxy()))
    report.checks.extend(_root_checks())
    if seccomp.supported():
        ok, detail = _in_child(_metadata)
    else:
        ok, detail = False, f"no filter for the {platform.machine()} architecture"
    report.checks.append(Check("metadata-filter", ok, detail))
    report.checks.append(Check("inotify", ok, "inotify and fanotify refused to every tool" if ok else detail))
    from workbench.sandbox.cgroup import pids_root

    root = pids_root()
    report.checks.append(Check("process-limit", root is not None or os.getuid() != 0,
                               f"a pids cgroup per worker under {root}" if root else
                               "RLIMIT_NPROC only (counts all of your processes)" if os.getuid() != 0
                               else "no writable pids cgroup, and root is exempt from RLIMIT_NPROC: "
                               "tools granted `run` are not bounded in processes", required=False))
    from workbench.sandbox.paths import has_openat2

    report.checks.append(Check("no-follow-paths", True,
                               "granted paths and the host's reads for tools are opened with "
                               "openat2 (RESOLVE_NO_SYMLINKS, RESOLVE_BENEATH)" if has_openat2() else
                               "no openat2 here: granted paths and the host's reads for tools are "
                               "walked one component at a time with O_NOFOLLOW", required=False))
    from workbench.sandbox.cgroup import NO_MEMORY_CGROUP, memory_root

    memory = memory_root()
    report.checks.append(Check("memory-cgroup", memory is not None,
                               f"a memory cgroup per worker under {memory}" if memory else
                               NO_MEMORY_CGROUP,
                               required=False))
    ok, detail = _in_child(_overlay)
    report.checks.append(Check("shell-overlay", ok, detail if ok else
                               f"{detail}: the shell tool cannot isolate a project here and is refused",
                               required=False))
    binary = deno_binary()
    report.checks.append(Check("deno", binary is not None,
                               binary or "not found: TypeScript and JavaScript tools cannot run",
                               required=False))
    return report


def _root_checks() -> list[Check]:
    """Identity, private root, own /proc and the loader, from one probe worker."""
    ok, detail = _in_child(_private_root)
    names = ("identity", "mount-namespace", "private-proc", "loader")
    if not ok:
        return [Check(name, False, detail) for name in names]
    try:
        found = json.loads(detail)
    except json.JSONDecodeError:
        return [Check(name, False, "the probe answered nonsense") for name in names]
    if "error" in found:
        return [Check(name, False, found["error"]) for name in names]
    from workbench.sandbox.process import UNUSED_ID

    uid = found.get("uid")
    if os.getuid() == 0:
        identity = (uid == UNUSED_ID and not _has_account(UNUSED_ID),
                    f"workers needing none of your paths run as uid {UNUSED_ID} (no account); the others "
                    "as you, with no capability, their metadata calls checked by the supervisor"
                    if uid == UNUSED_ID else f"the worker ran as uid {uid}")
    else:
        identity = (uid == os.getuid(), f"workers run as you (uid {uid}) in their own user namespace")
    return [
        Check("identity", *identity),
        Check("mount-namespace", bool(found.get("root")),
              "a private root: only the runtime and the grants exist" if found.get("root")
              else "paths outside the grants are visible"),
        Check("private-proc", bool(found.get("proc")),
              "/proc shows the worker's own PID namespace" if found.get("proc") else "/proc shows other processes"),
        Check("loader", bool(found.get("noexec")) and bool(found.get("libraries")),
              "everything but the runtime, the granted binaries and the shared objects they need "
              f"({found.get('bound')} files of the library folders here) is noexec: ld.so cannot run "
              "anything else, in a library folder or not"
              if found.get("noexec") and found.get("libraries") else
              "files outside the granted binaries can be mapped executable" if not found.get("noexec")
              else "programs of the library folders can be mapped executable (ld.so can run them)"),
    ]


def _has_account(uid: int) -> bool:
    import pwd

    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False
