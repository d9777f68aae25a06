"""The shared objects a worker may map executable, found on the host without running them.

In a worker's private root the library folders (``/usr/lib``, ``/lib``, ``/lib64``,
``/usr/lib64``) are ``noexec``: the dynamic loader, run by hand (``ld.so PROGRAM``),
maps its target with ``mmap(PROT_EXEC)``, which Landlock's EXECUTE right does not
govern, so a program living in a library folder (``/usr/lib/git-core/git``) could
otherwise run without a ``run`` grant for it. Only the files named here are bound
again, one by one, executable over that tree:

- the closure of ``DT_NEEDED`` of the granted binaries, of the scripts'
  interpreters and of the runtime (the Python interpreter, the extension modules of
  its standard library and of the extension's installed requirements, or the Deno
  binary), each name resolved as the loader
  would (``DT_RPATH``/``DT_RUNPATH`` with ``$ORIGIN``, the folders of
  ``/etc/ld.so.conf``, the default folders);
- what glibc and the runtimes open at run time with ``dlopen``: the NSS modules of
  the services ``/etc/nsswitch.conf`` names, ``libgcc_s`` (unwinding), ``libstdc++``,
  ``libresolv``, and, for a worker that
  may start processes, the ``gconv`` folder of ``iconv``'s modules (bound whole,
  and only when none of its files is a program).

The files are read, never run: each ELF header, program header table and dynamic
section is parsed here (no ``ldd``, no loader, nothing of the binary's own
``PT_INTERP``). A program is an ELF file of type ``ET_EXEC``, or one with a
``PT_INTERP`` and no ``DT_SONAME`` (libc, which may be run to print its version,
names itself); a program is never bound executable through this module, even when
something names it as needed. Results are cached per process, each file by its pin
(device, inode, modification time, size), so a file replaced on the host is read
again. The zygote fills the cache before it forks a worker.
"""

from __future__ import annotations

import glob
import os
import stat
import struct
from dataclasses import dataclass

LIBRARY_FOLDERS = ("/usr/lib", "/lib", "/lib64", "/usr/lib64")
"""System folders of shared libraries: ``noexec`` in a worker's root."""

DEFAULT_FOLDERS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
                   "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib")
"""Where the loader looks last, whatever ``ld.so.conf`` says."""

LOADED_AT_RUN_TIME = ("libgcc_s.so.1", "libstdc++.so.6", "libresolv.so.2")
"""Names glibc and the runtimes ``dlopen`` by themselves (unwinding, the resolver), beside
the NSS modules of the services ``/etc/nsswitch.conf`` names (``nss_modules``)."""

GCONV_FOLDERS = ("/usr/lib/x86_64-linux-gnu/gconv", "/usr/lib/aarch64-linux-gnu/gconv", "/usr/lib64/gconv",
                 "/usr/lib/gconv")

ET_EXEC, ET_DYN = 2, 3
PT_LOAD, PT_DYNAMIC, PT_INTERP = 1, 2, 3
DT_NULL, DT_NEEDED, DT_STRTAB, DT_STRSZ, DT_SONAME, DT_RPATH, DT_RUNPATH = 0, 1, 5, 10, 14, 15, 29
MAX_DYNAMIC = 1 << 16
MAX_STRINGS = 1 << 20


@dataclass(frozen=True)
class Elf:
    """What the loader reads of one ELF file."""

    program: bool
    needed: tuple[str, ...]
    rpath: tuple[str, ...]
    runpath: tuple[str, ...]
    machine: int
    wide: bool


def _key(info: os.stat_result) -> tuple[int, int, int, int]:
    return (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_size)


_ELVES: dict[tuple[int, int, int, int], Elf | None] = {}
_CLOSURES: dict[tuple[int, int, int, int], frozenset[str]] = {}
_DIRECT: dict[tuple, list[tuple[str, Elf]]] = {}
_UNIONS: dict[tuple[str, ...], tuple[tuple, frozenset[str]]] = {}
_LISTINGS: dict[str, tuple[tuple[int, int, int], frozenset[str], dict[str, str]]] = {}
_FOLDERS: list[str] | None = None
_GCONV: dict[str, tuple[tuple[int, int, int], bool]] = {}


def read_elf(path: str) -> Elf | None:
    """The ELF facts of ``path`` (cached by its pin), or None for what is no ELF file."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None  # a device or a FIFO is never opened
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        key = _key(info)
        if key not in _ELVES:
            try:
                _ELVES[key] = _parse(fd, info.st_size)
            except (OSError, struct.error, ValueError, UnicodeDecodeError):
                _ELVES[key] = None
        return _ELVES[key]
    finally:
        os.close(fd)


def _parse(fd: int, size: int) -> Elf | None:
    head = os.pread(fd, 64, 0)
    if len(head) < 52 or head[:4] != b"\x7fELF" or head[4] not in (1, 2) or head[5] not in (1, 2):
        return None
    wide = head[4] == 2
    end = "<" if head[5] == 1 else ">"
    if wide:
        e_type, machine, _v, _entry, phoff, _shoff, _f, _eh, phentsize, phnum = struct.unpack(
            end + "HHIQQQIHHH", head[16:58])
        phdr = end + "IIQQQQQQ"
    else:
        e_type, machine, _v, _entry, phoff, _shoff, _f, _eh, phentsize, phnum = struct.unpack(
            end + "HHIIIIIHHH", head[16:46])
        phdr = end + "IIIIIIII"
    if e_type not in (ET_EXEC, ET_DYN) or phnum > 256 or phentsize < struct.calcsize(phdr):
        return None
    table = os.pread(fd, phentsize * phnum, phoff)
    loads, dynamic, interp = [], None, False
    for index in range(phnum):
        fields = struct.unpack_from(phdr, table, index * phentsize)
        if wide:
            p_type, _flags, offset, vaddr, _paddr, filesz, _memsz, _align = fields
        else:
            p_type, offset, vaddr, _paddr, filesz, _memsz, _flags, _align = fields
        if p_type == PT_LOAD:
            loads.append((vaddr, offset, filesz))
        elif p_type == PT_DYNAMIC:
            dynamic = (offset, min(filesz, MAX_DYNAMIC))
        elif p_type == PT_INTERP:
            interp = True
    tags: list[tuple[int, int]] = []
    if dynamic is not None:
        blob = os.pread(fd, dynamic[1], dynamic[0])
        entry = end + ("qQ" if wide else "iI")
        width = struct.calcsize(entry)
        for at in range(0, len(blob) - width + 1, width):
            tag, value = struct.unpack_from(entry, blob, at)
            if tag == DT_NULL:
                break
            tags.append((tag, value))
    strtab = next((value for tag, value in tags if tag == DT_STRTAB), None)
    strsz = min(next((value for tag, value in tags if tag == DT_STRSZ), 0), MAX_STRINGS)
    strings = b""
    if strtab is not None and any(t in (DT_NEEDED, DT_RPATH, DT_RUNPATH) for t, _ in tags):
        for vaddr, file_offset, filesz in loads:
            if vaddr <= strtab < vaddr + filesz:
                strings = os.pread(fd, strsz, strtab - vaddr + file_offset)
                break
        else:
            raise ValueError("string table outside every segment")

    def string(offset: int) -> str:
        if offset >= len(strings):
            raise ValueError("string outside the string table")
        return strings[offset:strings.index(b"\0", offset)].decode()

    needed = tuple(string(v) for t, v in tags if t == DT_NEEDED)
    rpath = tuple(p for t, v in tags if t == DT_RPATH for p in string(v).split(":") if p)
    runpath = tuple(p for t, v in tags if t == DT_RUNPATH for p in string(v).split(":") if p)
    soname = any(t == DT_SONAME for t, _ in tags)
    program = e_type == ET_EXEC or (interp and not soname)
    return Elf(program, needed, rpath, runpath, machine, wide)


def search_folders() -> list[str]:
    """The folders ``/etc/ld.so.conf`` names (its includes followed), then the defaults."""
    global _FOLDERS
    if _FOLDERS is None:
        found: list[str] = []
        _conf("/etc/ld.so.conf", found, 0)
        found.extend(DEFAULT_FOLDERS)
        _FOLDERS = [f for f in dict.fromkeys(os.path.normpath(f) for f in found) if os.path.isdir(f)]
    return _FOLDERS


def _conf(path: str, found: list[str], depth: int) -> None:
    if depth > 8:
        return
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read(1 << 16).splitlines()
    except OSError:
        return
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line.startswith("include"):
            pattern = line[len("include"):].strip()
            if not os.path.isabs(pattern):
                pattern = os.path.join(os.path.dirname(path), pattern)
            for included in sorted(glob.glob(pattern)):
                _conf(included, found, depth + 1)
        elif line.startswith("/"):
            found.append(line.split()[0])


def _expand(folder: str, origin: str) -> str:
    for token in ("$ORIGIN", "${ORIGIN}"):
        folder = folder.replace(token, origin)
    return folder


def _names(folder: str) -> frozenset[str]:
    """The names in ``folder``, listed once per state of it."""
    try:
        info = os.stat(folder)
    except OSError:
        return frozenset()
    key = (info.st_dev, info.st_ino, info.st_mtime_ns)
    known = _LISTINGS.get(folder)
    if known is None or known[0] != key:
        try:
            names = frozenset(os.listdir(folder))
        except OSError:
            names = frozenset()
        _LISTINGS[folder] = known = (key, names, {})
    return known[1]


def _real(folder: str, name: str) -> str:
    """The real path of ``name`` in ``folder`` (listed by ``_names``), kept while the
    folder is unchanged (a link replaced changes it)."""
    reals = _LISTINGS[folder][2]
    if name not in reals:
        reals[name] = os.path.realpath(os.path.join(folder, name))
    return reals[name]


def _candidates(name: str, elf: Elf, origin: str, rpath: tuple[str, ...]) -> list[str]:
    """Every file the loader could take for ``name`` needed by ``elf`` (the first one
    that fits is what it takes; all are kept, since which fits is its business)."""
    if "/" in name:
        return [os.path.realpath(name)] if os.path.exists(name) else []
    folders = [*(rpath if not elf.runpath else ()), *(_expand(p, origin) for p in elf.runpath),
               *search_folders()]
    out = []
    for folder in dict.fromkeys(folders):
        if name in _names(folder):
            path = _real(folder, name)
            if path not in out:
                out.append(path)
    return out


def _direct(path: str, elf: Elf, inherited: tuple[str, ...]) -> list[tuple[str, Elf]]:
    """The shared objects ``path`` names in its ``DT_NEEDED``, each as every file the
    loader could take for it (cached by the file's pin and the ``DT_RPATH`` it inherits)."""
    try:
        key = (*_key(os.stat(path)), inherited)
    except OSError:
        return []
    if key not in _DIRECT:
        origin = os.path.dirname(path)
        rpath = tuple(_expand(p, origin) for p in elf.rpath) + inherited
        out = []
        for name in elf.needed:
            for candidate in _candidates(name, elf, origin, rpath):
                lib = read_elf(candidate)
                if lib is not None and not lib.program and (lib.machine, lib.wide) == (elf.machine, elf.wide):
                    out.append((candidate, lib))
        _DIRECT[key] = out
    return _DIRECT[key]


def closure(path: str) -> frozenset[str]:
    """The shared objects ``path`` needs, transitively, as real paths (itself excluded);
    cached by its pin. Empty for what is no ELF file (a script)."""
    try:
        key = _key(os.stat(path))
    except OSError:
        return frozenset()
    if key in _CLOSURES:
        return _CLOSURES[key]
    real = os.path.realpath(path)
    root = read_elf(real)
    found: set[str] = set()
    if root is not None:
        # The executable's DT_RPATH applies to every object it loads that has no DT_RUNPATH.
        inherited = tuple(_expand(p, os.path.dirname(real)) for p in root.rpath)
        queue = [(real, root)]
        while queue:
            current, elf = queue.pop()
            for candidate, lib in _direct(current, elf, inherited if current != real else ()):
                if candidate not in found and candidate != real:
                    found.add(candidate)
                    queue.append((candidate, lib))
    _CLOSURES[key] = frozenset(found)
    return _CLOSURES[key]


def nss_modules(path: str = "/etc/nsswitch.conf") -> list[str]:
    """The NSS modules glibc may load: ``libnss_SERVICE.so.2`` for each service the
    configuration names (``files`` and ``dns``, its defaults, always)."""
    services = {"files", "dns"}
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read(1 << 16).splitlines()
    except OSError:
        lines = []
    for line in lines:
        _, colon, rest = line.split("#", 1)[0].partition(":")
        if colon:
            services.update(w for w in rest.split() if not w.startswith("[") and w.isidentifier())
    return sorted(f"libnss_{service}.so.2" for service in services)


def named(names: tuple[str, ...] = LOADED_AT_RUN_TIME) -> set[str]:
    """The files (and their closures) the loader finds for ``names`` in its folders,
    with the NSS modules (``nss_modules``)."""
    out: set[str] = set()
    for folder in search_folders():
        listed = _names(folder)
        for name in (*names, *nss_modules()):
            if name not in listed:
                continue
            real = _real(folder, name)
            elf = read_elf(real)
            if elf is not None and not elf.program:
                out.add(real)
                out |= closure(real)
    return out


def module_folders() -> list[str]:
    """``iconv``'s module folders, when none of their files is a program (checked once
    per state of the folder)."""
    out = []
    for folder in GCONV_FOLDERS:
        try:
            info = os.stat(folder)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode):
            continue
        key = (info.st_dev, info.st_ino, info.st_mtime_ns)
        known = _GCONV.get(folder)
        if known is None or known[0] != key:
            clean = True
            for here, _folders, files in os.walk(folder):
                if any(elf is not None and elf.program
                       for elf in (read_elf(os.path.join(here, name)) for name in files)):
                    clean = False
                    break
            _GCONV[folder] = known = (key, clean)
        if known[1]:
            out.append(os.path.realpath(folder))
    return out


_LIBRARY_REALS: tuple[str, ...] | None = None


def library_reals() -> tuple[str, ...]:
    """The library folders as real paths (``/lib`` is often a link to ``usr/lib``)."""
    global _LIBRARY_REALS
    if _LIBRARY_REALS is None:
        _LIBRARY_REALS = tuple(dict.fromkeys(os.path.realpath(f) for f in LIBRARY_FOLDERS))
    return _LIBRARY_REALS


def in_library_folder(path: str) -> bool:
    """Whether the real path ``path`` lies in a library folder."""
    return any(path == f or path.startswith(f + "/") for f in library_reals())


def _state(folders) -> tuple:
    out = []
    for folder in folders:
        try:
            info = os.stat(folder)
            out.append((folder, info.st_ino, info.st_mtime_ns))
        except OSError:
            out.append((folder, 0, 0))
    return tuple(out)


_BASE: dict[str, tuple[tuple, list[str]]] = {}


def _base(processes: bool) -> list[str]:
    """What every worker gets (``named()``, and the module folders when it may start
    processes), cached while the library folders hold the same files."""
    state = _state((*search_folders(), *GCONV_FOLDERS))
    known = _BASE.get("named")
    if known is None or known[0] != state:
        _BASE["named"] = known = (state, sorted(p for p in named() if in_library_folder(p)))
    found = known[1]
    if processes:
        modules = _BASE.get("modules")
        if modules is None or modules[0] != state:
            _BASE["modules"] = modules = (state, [f for f in module_folders() if in_library_folder(f)])
        found = [*found, *modules[1]]
    return found


def closure_of_all(roots: list[str], folders: list[str]) -> frozenset[str]:
    """The union of the closures of ``roots``, cached while ``folders`` (those that hold
    the roots) and the roots' own names are unchanged: one check for a runtime's many
    extension modules instead of one per module."""
    state = (tuple(roots), _state(folders))
    known = _UNIONS.get(state[0])
    if known is None or known[0] != state[1]:
        found: set[str] = set()
        for root in roots:
            found |= closure(root)
        _UNIONS[state[0]] = known = (state[1], frozenset(found))
    return known[1]


def executable(roots: list[str], *, processes: bool, runtime: frozenset[str] = frozenset()) -> list[str]:
    """What to bind executable over the ``noexec`` library folders for a worker whose
    granted binaries and their interpreters are ``roots`` and whose runtime needs
    ``runtime``: their closures and what is loaded at run time, inside the library
    folders only (the rest keeps the rights of its own bind); with the ``gconv``
    folders when the worker may start processes."""
    forget_if_changed()
    found = set(runtime)
    for root in roots:
        found |= closure(root)
    found.update(_base(processes))
    return sorted(p for p in found if in_library_folder(p))


_SEEN_STATE: list[tuple] = []


def forget_if_changed() -> None:
    """Drop the closures when a library folder changed (a package added, upgraded or
    removed): a name may lead to another file now. Each file's own facts stay, by pin."""
    state = _state(search_folders())
    if _SEEN_STATE and _SEEN_STATE[0] != state:
        for cache in (_CLOSURES, _DIRECT, _UNIONS, _BASE):
            cache.clear()
    _SEEN_STATE[:] = [state]
