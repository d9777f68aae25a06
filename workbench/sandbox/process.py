"""Inside the worker: turning a fresh child into a sandboxed process, step by step.

Order matters and every step fails closed (an exception ends the child):

1. the parent's death kills this process (``PR_SET_PDEATHSIG``);
2. with a private network namespace, the loopback interface comes up and, for
   net grants, the proxy's listening socket is made here and handed to the host;
3. a private root holding only what the worker needs (``private_root``, ``mounts.py``,
   with the binds of ``binds``: the library folders ``noexec``, the shared objects the
   worker needs bound again executable, found by ``libraries.py`` in the zygote);
4. resource limits;
5. Landlock: exactly the granted paths and, for net grants, the proxy's port;
6. capabilities dropped, ``no_new_privs`` set;
7. the seccomp filter, last, since it forbids some of the calls above (and, for a
   worker that may start processes, ``memfd_create``).

Who the worker is, outside its user namespace (``outside_identity``): on a host
running as root, a worker whose grants name none of the person's paths runs as
``UNUSED_ID``, a uid and gid no account uses, so the kernel itself refuses it every
change to a file it does not own. A worker with read, write or run grants runs as
the person's own uid (with no capability, in its own user namespace): the kernel's
permission checks must let it read and write the person's files as the person
could, and the metadata those files carry is guarded by the seccomp filter and the
supervisor (``metadata.py``) rather than by ownership. A host that is not root runs
every worker as itself: the kernel already keeps it from other users' files.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import resource
import signal
import socket
import struct

from workbench.sandbox import landlock, libraries, mounts, seccomp
from workbench.sandbox._libc import (PR_CAPBSET_DROP, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS, PR_SET_PDEATHSIG,
                                     check, libc, prctl)
from workbench.sandbox.policy import PROXY_PORT, SYSTEM_READ, Policy, dynamic_loaders

SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
CAP_LAST = 63
DENO_DATA_HEADROOM_MB = 1024
DENO_CGROUP_HEADROOM_MB = 256
"""What Deno itself holds beyond its V8 heap (code, runtime), in the memory cgroup."""

UNUSED_ID = 2_000_000_000
"""The uid and gid, outside, of a root host's workers that need none of the person's
paths: no account and no file on a usual system has it (``doctor`` checks the
account list)."""

_LOADERS: list[str] | None = None
_PYTHON_ROOTS: list[str] | None = None
_PYTHON_FOLDERS: list[str] = []


def loaders() -> list[str]:
    """``dynamic_loaders()``, found once per zygote (globbing ``/usr/lib`` costs about
    10 ms) and inherited by every worker it forks."""
    global _LOADERS
    if _LOADERS is None:
        _LOADERS = dynamic_loaders()
    return _LOADERS


def outside_identity(policy: Policy) -> tuple[int, int]:
    """The uid and gid the worker's uid 0 is, outside (see the module docstring)."""
    uid, gid = os.getuid(), os.getgid()
    if uid == 0 and not (policy.read or policy.write or policy.execute or policy.runtime_write
                         or policy.runtime == "shell"):
        return UNUSED_ID, UNUSED_ID
    return uid, gid


def memory_mb(policy: Policy) -> int:
    """The bound on the memory of the worker and all its processes together."""
    headroom = DENO_CGROUP_HEADROOM_MB if policy.runtime == "deno" else 0
    return policy.limits.memory_mb + headroom


NO_DISPLAY_MODULES = ("_tkinter",)
"""Extension modules whose libraries are not bound: a worker reaches no display."""


def python_roots() -> tuple[list[str], list[str]]:
    """The Python runtime's own ELF files, the interpreter and its standard library's
    extension modules (``lib-dynload``), whose libraries a worker may load; and the
    folders that hold them."""
    global _PYTHON_ROOTS
    if _PYTHON_ROOTS is None:
        import sys

        folders = [p for p in sys.path if os.path.basename(p) == "lib-dynload" and os.path.isdir(p)]
        modules = [entry.path for folder in folders for entry in os.scandir(folder)
                   if entry.name.endswith(".so") and entry.name.split(".")[0] not in NO_DISPLAY_MODULES]
        executable = os.path.realpath(sys.executable)
        _PYTHON_ROOTS = [executable, *sorted(modules)]
        _PYTHON_FOLDERS[:] = [executable, *folders]
    return _PYTHON_ROOTS, _PYTHON_FOLDERS


_EXTENSION_MODULES: dict[str, tuple[tuple, list[str]]] = {}
MAX_MODULE_SCAN = 20_000
"""Files looked at, at most, for the extension modules of one extension's requirements."""


def extension_modules(folder: str) -> list[str]:
    """The extension modules (``*.so``) in an extension's installed requirements, found
    again only when the folder's own entries changed (a reinstall)."""
    state = libraries._state([folder])
    known = _EXTENSION_MODULES.get(folder)
    if known is None or known[0] != state:
        found, seen = [], 0
        for here, _folders, files in os.walk(folder):
            seen += len(files)
            if seen > MAX_MODULE_SCAN:
                break
            found += [os.path.join(here, f) for f in files if f.endswith(".so") or ".so." in f]
        _EXTENSION_MODULES[folder] = known = (state, sorted(found))
    return known[1]


def executable_libraries(policy: Policy) -> list[str]:
    """The files and folders of the library folders the worker may map executable
    (``libraries.executable``): the closure of its runtime (with its extension's
    installed requirements), its granted binaries and their interpreters. Found in
    the zygote before the worker is forked (cached)."""
    runtime: frozenset[str] = frozenset()
    libraries.forget_if_changed()
    if policy.runtime == "python":
        runtime = libraries.closure_of_all(*python_roots())
        for folder in policy.python_path:
            runtime |= libraries.closure_of_all(extension_modules(folder), [folder])
    elif policy.runtime == "mcp":
        # A sandboxed server's installation (an interpreter's prefix, a venv, a Node
        # package) holds its own extension modules: what they link against is bound
        # too. A folder that holds a library folder (a system prefix) is never walked.
        import glob

        for program in policy.runtime_execute:  # a system interpreter's own modules
            if os.path.basename(os.path.realpath(program)).startswith("python"):
                prefix = os.path.dirname(os.path.dirname(os.path.realpath(program)))
                dynload = sorted(glob.glob(os.path.join(prefix, "lib", "python3*", "lib-dynload", "*.so")))
                runtime |= libraries.closure_of_all(dynload, [os.path.dirname(p) for p in dynload[:1]])
        for folder in policy.runtime_read:
            if os.path.isdir(folder) and not _holds_library_folder(folder):
                # An interpreter's standard extension modules first: a big prefix may
                # hold more files than one walk reads.
                dynload = sorted(glob.glob(os.path.join(folder, "lib", "python3*", "lib-dynload", "*.so")))
                runtime |= libraries.closure_of_all(dynload, [os.path.dirname(p) for p in dynload[:1]])
                runtime |= libraries.closure_of_all(extension_modules(folder), [folder])
    return libraries.executable([*loaders(), *policy.execute, *policy.runtime_execute],
                                processes=policy.allow_processes, runtime=runtime)


def _holds_library_folder(path: str) -> bool:
    real = os.path.realpath(path).rstrip("/") + "/"
    return any((folder + "/").startswith(real) for folder in libraries.library_reals())


def binds(policy: Policy) -> list[mounts.Bind]:
    """What the worker's private root holds, with the rights of each mount.

    The library folders are ``noexec``: what the worker may map executable there is
    bound again, file by file (``executable_libraries``). The runtime's own folders
    stay executable (the interpreter maps its extension modules), but not their
    ``bin`` folders (programs) nor a runtime folder that holds a library folder (a
    system interpreter's prefix, ``/usr``)."""
    Bind = mounts.Bind
    if policy.runtime == "shell":
        return shell_binds(policy)
    out = []
    for path in SYSTEM_READ:
        out.append(Bind(path, device=path.startswith("/dev/")))
    out.append(Bind("/dev/null", writable=True, device=True))
    out.extend(Bind(path, executable=True) for path in loaders())
    out.extend(Bind(path, executable=True) for path in executable_libraries(policy))
    for path in policy.runtime_read:
        out.append(Bind(path, executable=not _holds_library_folder(path)))
        programs = os.path.join(path, "bin")
        if os.path.isdir(programs):
            out.append(Bind(programs))
    out.extend(Bind(path, executable=True) for path in policy.runtime_execute)
    out.extend(Bind(path, writable=True) for path in policy.runtime_write)
    out.append(Bind(policy.extension_dir))
    out.extend(Bind(path) for path in policy.read)
    out.extend(Bind(path, writable=True) for path in policy.write)
    out.extend(Bind(path, executable=True) for path in policy.execute)
    return out


SHELL_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/urandom", "/dev/random")
"""The devices a shell command reaches, bound read-only (writing to a device is not a
write to its mount; ``chmod`` of one is)."""

SHELL_READ = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
              "/etc/localtime", "/etc/timezone", "/etc/ssl", "/etc/ca-certificates",
              "/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/passwd", "/etc/group",
              "/etc/gitconfig", "/etc/mime.types", "/etc/services", "/etc/protocols",
              "/etc/os-release", "/etc/debian_version", "/etc/inputrc", "/etc/bash.bashrc",
              "/etc/profile", "/etc/python3", "/etc/pip.conf", "/usr/share/zoneinfo",
              "/usr/share/ca-certificates")
"""System files the programs of a shell command read (their configuration, who the
user is, certificates), read-only, where they exist."""

SHELL_LINKS = {"/dev/fd": "/proc/self/fd", "/dev/stdin": "/proc/self/fd/0",
               "/dev/stdout": "/proc/self/fd/1", "/dev/stderr": "/proc/self/fd/2"}


def shell_binds(policy: Policy) -> list[mounts.Bind]:
    """The private root of a ``shell`` command: the host's program folders read-only
    and executable (its own installation: the programs and the libraries they load),
    the system files they read, a few devices; the project is not a bind but an
    overlay (``mounts.Layers``), and ``/tmp`` a private ``tmpfs``."""
    Bind = mounts.Bind
    out = [Bind(path) for path in SHELL_READ]
    out.extend(Bind(path, device=True) for path in SHELL_DEVICES)
    out.extend(Bind(path, executable=True) for path in loaders())
    out.extend(Bind(path, executable=True) for path in policy.shell.get("programs", []))
    return out


def shell_layers(policy: Policy) -> mounts.Layers:
    shell = policy.shell
    return mounts.Layers(path=shell["project"], device=int(shell["device"]),
                         inode=int(shell["inode"]), upper_mb=int(shell["upper_mb"]),
                         tmp_mb=int(shell["tmp_mb"]))


def settle_pid1(policy: Policy, keep: set[int]) -> None:
    """What PID 1 of a sandbox (a worker, a sandboxed server) does before ``enter``:
    close every descriptor but ``keep``, move into its private root, and become
    dumpable again — entering the user namespace made it undumpable, which would keep
    the supervisor (of the same uid, on a host that is not root) from reading the
    calls it answers; ptrace stays refused to the sandboxed code by its filter."""
    for fd in os.listdir("/proc/self/fd"):
        if int(fd) not in keep:
            try:
                os.close(int(fd))
            except OSError:
                pass
    private_root(policy)
    prctl(PR_SET_DUMPABLE, 1)


def private_root(policy: Policy) -> str:
    """Replace this process's root with one holding only what ``binds`` names (see
    ``mounts.py``); the working folder it entered. Run first, as uid 0 of the fresh
    user namespace that owns this process's mount and PID namespaces."""
    layers = shell_layers(policy) if policy.runtime == "shell" else None
    root = mounts.prepare(binds(policy), {**policy.aliases, **(SHELL_LINKS if layers else {})}, layers)
    entered = mounts.enter_private_root(root, policy.cwd)
    if layers is not None:
        global UPPER_FD
        UPPER_FD = layers.upper_fd
    return entered


UPPER_FD = -1
"""In a shell's PID 1: the descriptor of its upper layer's ``tmpfs`` (``mounts.Layers``),
once its private root is made; handed to the host."""


def metadata_writable(policy: Policy) -> bool:
    """Whether the worker's metadata calls go to its supervisor (it may write somewhere)."""
    return bool(policy.write or policy.runtime_write)


def die_with_parent() -> None:
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def loopback_up() -> None:
    """Bring ``lo`` up in a fresh network namespace (it starts down)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH22x", b"lo", 0)
        flags = struct.unpack("16sH22x", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | IFF_UP))


def proxy_listener() -> socket.socket:
    """The socket the host's proxy will accept on, listening inside this namespace."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", PROXY_PORT))
    listener.listen(64)
    return listener


def set_limits(policy: Policy) -> None:
    limits = policy.limits
    mib = 1024 * 1024
    pairs = [(resource.RLIMIT_FSIZE, limits.file_size_mb * mib),
             (resource.RLIMIT_NOFILE, limits.open_files),
             (resource.RLIMIT_CORE, 0)]
    if policy.runtime != "mcp":
        # A server lives across many calls: no CPU-time limit for it.
        pairs.append((resource.RLIMIT_CPU, limits.cpu_seconds))
    if policy.runtime in ("deno", "mcp", "shell"):
        # V8 reserves a large address space at start (RLIMIT_AS would crash it, and the
        # JVM's too) and about 700 MiB of data mappings before the first line runs: its
        # heap is bounded by --max-old-space-size or the memory cgroup, and the data
        # limit leaves that headroom.
        pairs.append((resource.RLIMIT_DATA, (limits.memory_mb + DENO_DATA_HEADROOM_MB) * mib))
    else:
        pairs.append((resource.RLIMIT_AS, limits.memory_mb * mib))
    if policy.allow_processes:
        # RLIMIT_NPROC counts the processes of this uid in this user namespace, which
        # is the worker's own: its two processes and the tool's. Root outside is exempt
        # from it; the per-worker pids cgroup bounds a root host's workers.
        pairs.append((resource.RLIMIT_NPROC, limits.processes + 2))
    for which, value in pairs:
        resource.setrlimit(which, (value, value))


def restrict_paths(policy: Policy) -> None:
    rules = landlock.Ruleset(pins=policy.pins)
    if policy.runtime == "shell":
        for path in SHELL_READ:
            if os.path.exists(path):
                rules.allow(path, landlock.READ)
        for path in SHELL_DEVICES:
            if os.path.exists(path):
                rules.allow(path, landlock.READ_FILE | landlock.WRITE_FILE)
        for path in [*loaders(), *policy.shell.get("programs", [])]:
            if os.path.exists(path):
                rules.allow(path, landlock.READ_EXEC)
        rules.allow("/", landlock.READ_DIR)  # the private root: only what is bound is there
        for path in (policy.shell["project"], "/tmp"):
            rules.allow(path, landlock.READ_EXEC | landlock.WRITE)
        if policy.net:
            rules.connect_ports.add(PROXY_PORT)
        rules.restrict()
        return
    for path in SYSTEM_READ:
        rules.allow(path, landlock.READ)
    for path in loaders():
        rules.allow(path, landlock.READ_EXEC)
    for path in policy.runtime_read:
        rules.allow(path, landlock.READ)
    for path in policy.runtime_execute:
        rules.allow(path, landlock.READ_EXEC)
    for path in policy.runtime_write:
        rules.allow(path, landlock.READ | landlock.WRITE)
    rules.allow(policy.extension_dir, landlock.READ)
    rules.allow("/dev/null", landlock.READ_FILE | landlock.WRITE_FILE)
    for path in policy.read:
        rules.allow(path, landlock.READ)
    for path in policy.write:
        rules.allow(path, landlock.WRITE)
    for path in policy.execute:
        rules.allow(path, landlock.READ_EXEC)
    if policy.net:
        rules.connect_ports.add(PROXY_PORT)
    if policy.serve_port:
        rules.bind_ports.add(policy.serve_port)
    rules.restrict()


def dialer(port: int) -> socket.socket:
    """Fork the dialer of a sandbox that serves on ``port`` of its own loopback (a
    plugin binding the port it is given, as the seed has it): the host's end of a
    ``SOCK_SEQPACKET`` pair. For each message the host sends, the dialer connects to
    ``127.0.0.1:port`` inside this network namespace and sends the connected socket
    back (``SCM_RIGHTS``), or an empty message when nothing accepts there. The host
    then talks to the server over that socket, and nothing of the host's network is in
    the sandbox. Run by PID 1 after ``loopback_up``, before it settles: the dialer keeps
    no other descriptor, may open no file and connect to no other port (Landlock), and
    ends with PID 1 (``PR_SET_PDEATHSIG``, and the PID namespace)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid != 0:
        theirs.close()
        return ours
    code = 1
    try:
        ours.close()
        die_with_parent()
        for fd in os.listdir("/proc/self/fd"):
            if int(fd) not in (theirs.fileno(), 2):
                try:
                    os.close(int(fd))
                except OSError:
                    pass
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        landlock.Ruleset(connect_ports={port}).restrict()
        while theirs.recv(16):
            conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                conn.connect(("127.0.0.1", port))
            except OSError:
                theirs.send(b"")
            else:
                socket.send_fds(theirs, [b"c"], [conn.fileno()])
            finally:
                conn.close()
        code = 0
    except BaseException:  # noqa: BLE001 — the host sees the pair closed: no answer
        code = 1
    finally:
        os._exit(code)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> None:
    """Empty the bounding, ambient, effective, permitted and inheritable sets."""
    for cap in range(CAP_LAST + 1):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            break
    libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    check(libc.capset(ctypes.byref(header), data), "capset")


def enter(policy: Policy) -> int | None:
    """Apply limits, Landlock, capabilities and seccomp to this process, for good.

    Returns:
        The seccomp listener for the supervisor when metadata calls go to it, else None.
    """
    set_limits(policy)
    restrict_paths(policy)
    drop_capabilities()
    if policy.runtime == "shell":
        # Every mount it may write is its own (the overlay's upper layer, its /tmp);
        # the rest is read-only, so metadata calls change nothing of the host's, and
        # the PID namespace ends whatever leaves its group.
        return seccomp.load(seccomp.build_filter(allow_processes=True, shell=True))
    notify = metadata_writable(policy)
    program = seccomp.build_filter(allow_processes=policy.allow_processes, notify_metadata=notify,
                                   deny_memfd=policy.allow_processes)
    return seccomp.load(program, listener=notify)


def clean_environment(policy: Policy, extra: dict[str, str]) -> None:
    """Leave only the granted keys (and the protocol's own) in the environment."""
    os.environ.clear()
    os.environ.update(policy.env)
    os.environ.update(extra)
