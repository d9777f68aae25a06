"""The shared objects a worker may map executable, read from real ELF files of this
machine (never run): closures resolve as the loader would, programs are never in them,
and a file replaced on the host is read again."""

from __future__ import annotations

import os
import shutil
import sys

from workbench.sandbox import libraries, process
from workbench.sandbox.policy import Policy, python_runtime_paths


def real(name: str) -> str:
    path = shutil.which(name)
    assert path, name
    return os.path.realpath(path)


def test_programs_and_shared_objects_are_told_apart():
    assert libraries.read_elf(real("git")).program
    libc = os.path.realpath("/lib/x86_64-linux-gnu/libc.so.6")
    assert not libraries.read_elf(libc).program  # it may be run, but names itself
    assert libraries.read_elf("/etc/passwd") is None
    assert libraries.read_elf(real("xdg-open") if shutil.which("xdg-open") else "/etc/hostname") is None


def test_a_closure_is_what_the_loader_would_map_and_never_a_program():
    found = libraries.closure(real("git"))
    names = {os.path.basename(p) for p in found}
    assert any(n.startswith("libc.so") for n in names) and any(n.startswith("libz.so") for n in names), names
    assert all(not libraries.read_elf(p).program for p in found)
    assert real("git") not in found
    # A script has no closure of its own (its interpreter is a root of its own).
    assert libraries.closure("/etc/passwd") == frozenset()


def test_the_runpath_is_followed_before_the_system_folders():
    """The interpreter's own libpython comes from its DT_RUNPATH (or DT_RPATH) folder
    when it names one, as the loader takes it."""
    python = os.path.realpath(sys.executable)
    elf = libraries.read_elf(python)
    found = libraries.closure(python)
    folders = [os.path.realpath(p.replace("$ORIGIN", os.path.dirname(python)))
               for p in (*elf.runpath, *elf.rpath)]
    wanted = [os.path.realpath(os.path.join(f, n)) for f in folders for n in elf.needed
              if os.path.exists(os.path.join(f, n))]
    assert wanted or not folders, (folders, elf.needed)
    assert set(wanted) <= found, (wanted, sorted(found))
    assert any(os.path.basename(p).startswith("libc.so") for p in found), sorted(found)


def test_a_replaced_file_is_read_again(tmp_path):
    copy = tmp_path / "tool"
    shutil.copy2(real("git"), copy)
    assert libraries.read_elf(str(copy)).program
    before = libraries.closure(str(copy))
    assert before
    copy.unlink()
    copy.write_text("#!/bin/sh\necho now a script\n")
    assert libraries.read_elf(str(copy)) is None
    assert libraries.closure(str(copy)) == frozenset()


def test_a_worker_gets_the_closure_of_its_runtime_and_grants_inside_the_library_folders():
    policy = Policy(runtime="python", entry="", function="", extension_dir="/nonexistent",
                    runtime_read=python_runtime_paths())
    alone = set(process.executable_libraries(policy))
    assert all(libraries.in_library_folder(p) for p in alone)
    assert any(os.path.basename(p).startswith("libssl.so") for p in alone)  # _ssl's, in lib-dynload
    assert any(os.path.basename(p) == "libnss_files.so.2" for p in alone)
    assert not any(os.path.basename(p) == "gconv" for p in alone)  # iconv only with processes
    policy.execute = [real("curl")]
    granted = set(process.executable_libraries(policy))
    assert alone < granted
    assert any(os.path.basename(p).startswith("libcurl.so") for p in granted)
    assert any(os.path.basename(p) == "gconv" for p in granted)
    assert not any(libraries.read_elf(p) and libraries.read_elf(p).program for p in granted)


def test_library_folders_are_noexec_and_what_is_needed_is_bound_again():
    policy = Policy(runtime="python", entry="", function="", extension_dir="/nonexistent",
                    runtime_read=python_runtime_paths(), execute=[real("git")])
    binds = {b.path: b for b in process.binds(policy)}
    for folder in libraries.LIBRARY_FOLDERS:
        assert not binds[folder].executable, folder
    for path in process.executable_libraries(policy):
        assert binds[path].executable and not binds[path].writable, path
    assert binds[real("git")].executable
    prefix_bin = os.path.join(sys.prefix, "bin")
    assert prefix_bin in binds and not binds[prefix_bin].executable


def test_nss_modules_follow_nsswitch(tmp_path):
    conf = tmp_path / "nsswitch.conf"
    conf.write_text("passwd: files ldap [NOTFOUND=return] systemd\nhosts: mdns4_minimal dns\n# group: nis\n")
    assert libraries.nss_modules(str(conf)) == ["libnss_dns.so.2", "libnss_files.so.2", "libnss_ldap.so.2",
                                                "libnss_mdns4_minimal.so.2", "libnss_systemd.so.2"]


def test_a_changed_library_folder_drops_the_closures(tmp_path, monkeypatch):
    monkeypatch.setattr(libraries, "_FOLDERS", [str(tmp_path)])
    monkeypatch.setattr(libraries, "_CLOSURES", {})
    libraries.forget_if_changed()
    libraries._CLOSURES[(0, 0, 0, 0)] = frozenset({"/usr/lib/libold.so.1"})
    libraries.forget_if_changed()
    assert (0, 0, 0, 0) in libraries._CLOSURES  # nothing changed: kept
    (tmp_path / "libnew.so.1").write_bytes(b"")  # a package upgraded
    libraries.forget_if_changed()
    assert (0, 0, 0, 0) not in libraries._CLOSURES


def test_the_system_libraries_of_an_extensions_native_requirements_are_bound(tmp_path):
    """A requirement's extension module (here libcurl, copied in as one) needs system
    libraries the runtime does not: they are bound for that extension's workers."""
    site = tmp_path / "site"
    (site / "fetcher").mkdir(parents=True)
    libcurl = os.path.realpath("/usr/lib/x86_64-linux-gnu/libcurl.so.4")
    shutil.copy2(libcurl, site / "fetcher" / "_native.cpython-311-x86_64-linux-gnu.so")
    needed = {os.path.basename(p) for p in libraries.closure(libcurl)}
    policy = Policy(runtime="python", entry="", function="", extension_dir="/nonexistent",
                    runtime_read=[*python_runtime_paths(), str(site)])
    without = {os.path.basename(p) for p in process.executable_libraries(policy)}
    extra = needed - without
    assert extra, "libcurl needs nothing the runtime lacks"
    policy.python_path = [str(site)]
    bound = {os.path.basename(p) for p in process.executable_libraries(policy)}
    assert extra <= bound, extra - bound


def test_a_console_scripts_own_folder_is_no_runtime_folder(monkeypatch):
    """``.venv/bin/workbench`` puts ``.venv/bin`` first on sys.path: it is still not a
    folder every Python worker reads, nor one it may map executable."""
    prefix_bin = os.path.join(sys.prefix, "bin")
    monkeypatch.setattr(sys, "path", [prefix_bin, prefix_bin + "/", *sys.path])
    read = python_runtime_paths()
    assert prefix_bin not in read and prefix_bin + "/" not in read
    assert sys.prefix in read
    policy = Policy(runtime="python", entry="", function="", extension_dir="/nonexistent",
                    runtime_read=read)
    assert all(not bind.executable for bind in process.binds(policy) if bind.path.rstrip("/") == prefix_bin)
