"""Source strings and semver ranges."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.ext.errors import SourceError
from workbench.ext.semver import max_satisfying, parse_version
from workbench.ext.sources import Source, parse_source


def test_folder_and_archive_paths_become_absolute(tmp_path: Path) -> None:
    (tmp_path / "ext").mkdir()
    (tmp_path / "ext.TGZ").write_bytes(b"")
    (tmp_path / "ext.tar.gz").write_bytes(b"")
    assert parse_source("ext", cwd=tmp_path) == Source("folder", path=tmp_path / "ext")
    assert parse_source("ext.TGZ", cwd=tmp_path).kind == "archive"
    assert str(parse_source("./ext.tar.gz", cwd=tmp_path)) == str(tmp_path / "ext.tar.gz")


@pytest.mark.parametrize(("text", "package", "spec"), [
    ("npm:loca-extension-foo", "loca-extension-foo", None),
    ("npm:loca-extension-foo@1.0.0", "loca-extension-foo", "1.0.0"),
    ("npm:@acme/loca-extension-bar", "@acme/loca-extension-bar", None),
    ("npm:@acme/loca-extension-bar@^2.1", "@acme/loca-extension-bar", "^2.1"),
    ("npm:foo@next", "foo", "next"),
])
def test_npm_sources(text: str, package: str, spec: str | None) -> None:
    source = parse_source(text)
    assert (source.kind, source.package, source.spec) == ("npm", package, spec)
    assert str(source) == text
    assert source.unpinned().spec is None


@pytest.mark.parametrize("text", ["npm:", "npm:Foo", "npm:../x", "npm:@scope", "npm:a b",
                                  "npm:_private"])
def test_bad_npm_names(text: str) -> None:
    with pytest.raises(SourceError):
        parse_source(text)


@pytest.mark.parametrize(("spec", "expected"), [
    ("^1.2", "1.3.0"), ("~1.2.3", "1.2.10"), ("1.x", "1.3.0"), ("*", "2.1.0"),
    (">=1.2.5 <2", "1.3.0"), ("1.2.3 - 1.3", "1.3.0"), ("<1", "0.9.0"), (">2", None),
    ("2.0.0-rc.1", "2.0.0-rc.1"), ("^0.9", "0.9.0"), ("=1.0.0", "1.0.0"),
    (">= 1.2.3 < 1.3", "1.2.10"), ("^1.3.0-beta.0", "1.3.0"), ("^3 || ~1.2", "1.2.10"),
    ("^2.0.0-rc.0", "2.1.0"), ("^0.0.1", None),
])
def test_ranges(spec: str, expected: str | None) -> None:
    versions = ["0.9.0", "1.0.0", "1.2.3", "1.2.10", "1.3.0-beta.1", "1.3.0", "2.0.0-rc.1",
                "2.0.0", "2.1.0", "not-a-version"]
    assert max_satisfying(versions, spec) == expected


def test_prereleases_sort_before_their_release() -> None:
    order = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta.2",
             "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0"]
    keys = [parse_version(v).key() for v in order]
    assert keys == sorted(keys)


def test_a_spec_that_is_not_a_range() -> None:
    with pytest.raises(ValueError):
        max_satisfying(["1.0.0"], "one point oh")
