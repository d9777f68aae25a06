"""Hostile archives are refused member by member, and a refused install changes nothing."""

from __future__ import annotations

import stat
import tarfile
import zipfile
from pathlib import Path

import pytest
from ext_samples import extension_rows, file_info, make_tgz, make_zip, tar_with, tree, write_extension

from workbench.config.home import Home
from workbench.ext.archive import ArchiveLimits, extract_archive, member_parts
from workbench.ext.errors import ArchiveError
from workbench.ext.manager import ExtensionManager
from workbench.store import Store

SMALL = ArchiveLimits(max_total_bytes=4000, max_files=6, max_file_bytes=1500)


def _symlink(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.SYMTYPE
    info.linkname = target
    return info


def _hardlink(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.LNKTYPE
    info.linkname = target
    return info


def _device(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.CHRTYPE
    info.devmajor, info.devminor = 1, 3
    return info


def _valid_members() -> list[tuple[tarfile.TarInfo, bytes | None]]:
    manifest = (b'{"name": "evil", "displayName": "Evil", "description": "d", '
                b'"entry": "main.py", "tools": []}')
    return [(file_info("package/loca.json"), manifest), (file_info("package/main.py"), b"X = 1\n")]


HOSTILE_TARS = {
    "traversal": ([(file_info("package/../../evil"), b"owned")], "'package/../../evil'",
                  "'..' segment"),
    "dotdot-first": ([(file_info("../evil"), b"owned")], "'../evil'", "'..' segment"),
    "absolute": ([(file_info("/tmp/workbench-evil-absolute"), b"owned")],
                 "'/tmp/workbench-evil-absolute'", "absolute path"),
    "symlink-out": ([(_symlink("package/link", "../../../../etc/passwd"), None)],
                    "'package/link'", "symbolic link"),
    "hardlink-out": ([(_hardlink("package/hard", "/etc/passwd"), None)], "'package/hard'",
                     "hard link"),
    "device": ([(_device("package/null"), None)], "'package/null'", "device file"),
    "backslash": ([(file_info("package\\..\\evil"), b"owned")], "backslash", "backslash"),
    "drive-letter": ([(file_info("C:/evil"), b"owned")], "'C:/evil'", "drive letter"),
    "oversize-file": ([(file_info("package/big.bin"), b"x" * 2000)], "'package/big.bin'",
                      "limit for one file is 1500"),
    "oversize-total": ([(file_info(f"package/part{i}.bin"), b"x" * 1400) for i in range(4)],
                       "'package/part2.bin'", "exceed 4000 bytes"),
    "too-many-files": ([(file_info(f"package/f{i}.txt"), b"x") for i in range(10)],
                       "'package/f4.txt'", "more than 6 entries"),
    "duplicate": ([(file_info("package/a.txt"), b"one"), (file_info("package/a.txt"), b"two")],
                  "'package/a.txt'", "more than once"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_TARS))
def test_hostile_tar_is_refused_naming_the_member(case: str, tmp_path: Path) -> None:
    members, named, why = HOSTILE_TARS[case]
    archive = tar_with(tmp_path / f"{case}.tgz", _valid_members() + members)
    dest = tmp_path / "out"
    with pytest.raises(ArchiveError) as caught:
        extract_archive(archive, dest, SMALL)
    message = str(caught.value)
    assert named in message and why in message, message
    assert caught.value.where == str(archive)
    assert not (tmp_path / "evil").exists()
    assert not Path("/tmp/workbench-evil-absolute").exists()


def _zip_with(archive: Path, entries: list[tuple[zipfile.ZipInfo | str, bytes]]) -> Path:
    with zipfile.ZipFile(archive, "w") as zf:
        for info, data in entries:
            zf.writestr(info, data)
    return archive


def _zip_symlink(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


@pytest.mark.parametrize(("entries", "named", "why"), [
    ([("../evil.txt", b"owned")], "'../evil.txt'", "'..' segment"),
    ([("ext/../../evil.txt", b"owned")], "'ext/../../evil.txt'", "'..' segment"),
    ([("/abs/evil.txt", b"owned")], "'/abs/evil.txt'", "absolute path"),
    ([_zip_symlink("ext/link", "/etc/passwd")], "'ext/link'", "symbolic link"),
    ([("ext/big.bin", b"y" * 2000)], "'ext/big.bin'", "limit for one file"),
    ([(f"ext/{i}.txt", b"z") for i in range(10)], "10 entries", "limit is 6"),
], ids=["zip-slip", "zip-slip-nested", "zip-absolute", "zip-symlink", "zip-oversize",
        "zip-too-many"])
def test_hostile_zip_is_refused_naming_the_member(entries, named: str, why: str,
                                                  tmp_path: Path) -> None:
    archive = _zip_with(tmp_path / "hostile.zip", entries)
    with pytest.raises(ArchiveError) as caught:
        extract_archive(archive, tmp_path / "out", SMALL)
    assert named in str(caught.value) and why in str(caught.value), str(caught.value)
    assert not (tmp_path / "evil.txt").exists()


def test_npm_tarball_top_folder_is_the_root(tmp_path: Path) -> None:
    source = write_extension(tmp_path / "src")
    archive = make_tgz(source, tmp_path / "foo.tgz")
    root = extract_archive(archive, tmp_path / "out")
    assert root == tmp_path / "out" / "package"
    assert sorted(p.name for p in root.iterdir()) == ["loca.json", "main.py", "package.json"]


def test_zip_without_top_folder_is_its_own_root(tmp_path: Path) -> None:
    source = write_extension(tmp_path / "src")
    archive = make_zip(source, tmp_path / "foo.zip")
    root = extract_archive(archive, tmp_path / "out")
    assert root == tmp_path / "out"
    assert (root / "loca.json").is_file()


def test_macos_metadata_folder_is_ignored(tmp_path: Path) -> None:
    archive = _zip_with(tmp_path / "mac.zip", [("ext/loca.json", b"{}"),
                                               ("__MACOSX/ext/._loca.json", b"junk")])
    root = extract_archive(archive, tmp_path / "out")
    assert root == tmp_path / "out" / "ext"
    assert not (tmp_path / "out" / "__MACOSX").exists()


def test_a_file_that_is_not_an_archive_is_refused(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.tgz"
    bogus.write_bytes(b"this is not gzip at all")
    with pytest.raises(ArchiveError, match="not a readable archive"):
        extract_archive(bogus, tmp_path / "out")


def test_executable_bit_is_kept_and_nothing_else(tmp_path: Path) -> None:
    archive = tar_with(tmp_path / "modes.tgz", [
        (file_info("package/run.sh", 0o4755), b"#!/bin/sh\n"),
        (file_info("package/data.txt", 0o666), b"data")])
    root = extract_archive(archive, tmp_path / "out")
    assert stat.S_IMODE((root / "run.sh").stat().st_mode) == 0o755
    assert stat.S_IMODE((root / "data.txt").stat().st_mode) == 0o644


@pytest.mark.parametrize("name", ["a/./b", "./a", "a//b"])
def test_harmless_spellings_are_normalized(name: str) -> None:
    assert member_parts(name) in (["a", "b"], ["a"])


@pytest.mark.parametrize("case", ["traversal", "absolute", "symlink-out", "hardlink-out",
                                  "oversize-file", "too-many-files"])
def test_refused_archive_install_leaves_the_home_as_it_was(case: str, home: Home, store: Store,
                                                           tmp_path: Path) -> None:
    manager = ExtensionManager(home, store, registry_url="http://127.0.0.1:9", limits=SMALL)
    members, named, _why = HOSTILE_TARS[case]
    archive = tar_with(tmp_path / f"{case}.tgz", _valid_members() + members)
    before_tree, before_rows = tree(home.root), extension_rows(store)
    asked = []
    with pytest.raises(ArchiveError) as caught:
        manager.install(str(archive), approve=lambda plan: asked.append(plan) or True)
    assert named in str(caught.value)
    assert asked == []
    assert tree(home.root) == before_tree
    assert extension_rows(store) == before_rows
    assert manager.list() == []
