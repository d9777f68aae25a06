"""Opening paths with no link followed, with openat2 and with the O_NOFOLLOW walk."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from workbench.sandbox import paths


@pytest.fixture(params=["openat2", "walk"])
def mechanism(request, monkeypatch) -> str:
    if request.param == "walk":
        monkeypatch.setattr(paths, "_openat2_works", False)
    else:
        assert paths.has_openat2()
    return request.param


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "root" / "dir").mkdir(parents=True)
    (tmp_path / "root" / "dir" / "file.txt").write_text("inside")
    (tmp_path / "outside.txt").write_text("outside")
    (tmp_path / "root" / "out").symlink_to(tmp_path)
    (tmp_path / "root" / "dir" / "link.txt").symlink_to(tmp_path / "outside.txt")
    (tmp_path / "root" / "near").symlink_to("dir")
    os.mkfifo(tmp_path / "root" / "fifo")
    return tmp_path / "root"


def test_read_beneath_reads_files_inside_and_nothing_through_a_link(tree, mechanism):
    assert paths.read_beneath(tree, "dir/file.txt", 100) == b"inside"
    assert paths.read_beneath(tree, "./dir//file.txt", 100) == b"inside"
    for relative in ("out/outside.txt", "dir/link.txt", "near/file.txt"):
        with pytest.raises(OSError) as caught:
            paths.read_beneath(tree, relative, 100)
        assert caught.value.errno == errno.ELOOP and relative in str(caught.value)


@pytest.mark.parametrize("relative", ["../outside.txt", "/etc/passwd", "", "dir/../../x", "a\0b"])
def test_read_beneath_refuses_paths_that_leave_the_folder(tree, mechanism, relative):
    with pytest.raises(OSError) as caught:
        paths.read_beneath(tree, relative, 100)
    assert caught.value.errno == errno.EINVAL


def test_read_beneath_bounds_size_and_refuses_what_is_not_a_file(tree, mechanism):
    with pytest.raises(OSError) as caught:
        paths.read_beneath(tree, "dir/file.txt", 3)
    assert caught.value.errno == errno.EFBIG
    for relative, code in (("dir", errno.EISDIR), ("fifo", errno.EINVAL),
                           ("missing.txt", errno.ENOENT)):
        with pytest.raises(OSError) as caught:
            paths.read_beneath(tree, relative, 100)
        assert caught.value.errno == code, relative


def test_a_pin_holds_the_object_and_refuses_every_swap(tree, tmp_path, mechanism):
    folder = tree / "dir"
    pin = paths.pin_path(str(folder))
    assert (pin.path, pin.inode) == (str(folder), folder.stat().st_ino)
    paths.check_pinned(str(folder), pin)
    os.close(paths.open_pinned(pin))
    # A link in its place.
    folder.rename(tree / "dir.old")
    folder.symlink_to(tmp_path)
    with pytest.raises(paths.PathChanged, match="leads to"):
        paths.check_pinned(str(folder), pin)
    with pytest.raises(paths.PathChanged, match="symbolic link"):
        paths.open_pinned(pin)
    # Another folder in its place.
    folder.unlink()
    folder.mkdir()
    with pytest.raises(paths.PathChanged, match="another folder"):
        paths.open_pinned(pin)
    # Gone.
    folder.rmdir()
    with pytest.raises(paths.PathChanged, match="gone"):
        paths.open_pinned(pin)


def test_a_link_in_an_intermediate_component_is_refused(tree, tmp_path, mechanism):
    (tmp_path / "elsewhere" / "deep").mkdir(parents=True)
    deep = tree / "dir" / "deep"
    deep.mkdir()
    pin = paths.pin_path(str(deep))
    (tree / "dir").rename(tree / "dir.old")
    (tree / "dir").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(paths.PathChanged, match="symbolic link"):
        paths.open_pinned(pin)


def test_a_path_that_was_absent_is_accepted_when_reached_without_links(tree, tmp_path, mechanism):
    later = tree / "later"
    pin = paths.pin_path(str(later))
    assert pin.absent and paths.open_pinned(pin) is None
    later.mkdir()
    os.close(paths.open_pinned(pin))
    later.rmdir()
    later.symlink_to(tmp_path)
    with pytest.raises(paths.PathChanged, match="symbolic link"):
        paths.open_pinned(pin)


def test_a_path_through_a_link_pins_where_it_leads(tree, tmp_path, mechanism):
    pin = paths.pin_path(str(tree / "near"))
    assert pin.path == str(tree / "dir")
    paths.check_pinned(str(tree / "near"), pin)
