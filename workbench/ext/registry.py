"""A small client of the npm registry: packuments, tarballs checked by integrity, search.

The registry's base URL comes from the ``extensions.registry`` setting. A package's
document (its packument) is read from ``{registry}/{name}`` (a scoped name as
``@scope%2fname``); the version is the requested one, a dist-tag, the highest that
satisfies a semver range, or ``dist-tags.latest``. Its tarball is downloaded to a
file and checked against ``dist.integrity`` (the strongest SHA-2 hash it lists),
or against ``dist.shasum`` (SHA-1) only when no integrity is given, before anything
is unpacked; a mismatch deletes the file and refuses. Search asks
``/-/v1/search`` for the keywords ``loca-extension`` and ``workbench-extension``
and merges the answers.

Network failures, timeouts, error statuses and answers that are not the expected JSON
become a ``RegistryError`` naming the URL. This module imports nothing of ours but
``workbench.ext``'s errors and semver.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    import httpx

from workbench.config.settings import DEFAULTS
from workbench.ext.errors import IntegrityError, RegistryError
from workbench.ext.semver import max_satisfying, parse_version

DEFAULT_REGISTRY = DEFAULTS.extensions.registry
"""The public npm registry, the default of ``extensions.registry``."""

SEARCH_KEYWORDS: tuple[str, ...] = ("loca-extension", "workbench-extension")
"""The package keywords that mark an extension, searched in this order."""

MAX_PACKUMENT_BYTES = 32 * 1024 * 1024
"""The largest package document read (popular packages list thousands of versions)."""

MAX_TARBALL_BYTES = 100 * 1024 * 1024
"""The largest package tarball downloaded."""

_HASHES = {"sha512": hashlib.sha512, "sha384": hashlib.sha384, "sha256": hashlib.sha256}
"""The integrity algorithms accepted, strongest first."""


@dataclass(frozen=True)
class PackageVersion:
    """One version of a package, as the registry describes it.

    Attributes:
        name: The package name.
        version: The exact version.
        tarball: The URL of its tarball.
        integrity: The ``dist.integrity`` SRI string, if any.
        shasum: The ``dist.shasum`` hex SHA-1, if any.
        description: The package's description.
    """

    name: str
    version: str
    tarball: str
    integrity: str | None
    shasum: str | None
    description: str = ""


@dataclass(frozen=True)
class SearchResult:
    """One package found by a search."""

    name: str
    description: str
    version: str
    keywords: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "version": self.version,
                "keywords": list(self.keywords)}


@dataclass(frozen=True)
class Checksum:
    """The expected digest of a tarball: algorithm and raw bytes."""

    algorithm: str
    digest: bytes

    def describe(self) -> str:
        return f"{self.algorithm}-{base64.b64encode(self.digest).decode()}"


def package_url(registry: str, name: str) -> str:
    """The packument URL of ``name``; a scoped name's slash is encoded (``@scope%2fname``)."""
    return f"{registry.rstrip('/')}/{quote(name, safe='@')}"


def expected_checksum(version: PackageVersion) -> Checksum:
    """The checksum a tarball must match: the strongest SHA-2 entry of ``integrity``,
    else ``shasum`` (SHA-1).

    Raises:
        IntegrityError: The registry gives neither, or only values that cannot be read.
    """
    if version.integrity:
        found: dict[str, bytes] = {}
        for item in version.integrity.split():
            algorithm, _, value = item.partition("-")
            value = value.split("?", 1)[0]  # SRI options follow a '?'
            if algorithm in _HASHES and algorithm not in found:
                try:
                    found[algorithm] = base64.b64decode(value, validate=True)
                except ValueError:
                    continue
        for algorithm in _HASHES:
            if algorithm in found:
                return Checksum(algorithm, found[algorithm])
    if version.shasum:
        try:
            return Checksum("sha1", bytes.fromhex(version.shasum))
        except ValueError:
            pass
    raise IntegrityError(f"the registry gives no usable checksum for {version.name}@"
                         f"{version.version} (dist.integrity or dist.shasum); refusing to "
                         "install it unchecked", where=version.tarball)


class RegistryClient:
    """Talks to one npm registry.

    Args:
        base_url: The registry, e.g. ``https://registry.npmjs.org``.
        timeout: Seconds to wait for a connection or for the next bytes.
        transport: An ``httpx`` transport to use instead of the network (a seam for
            tests and proxies).
    """

    def __init__(self, base_url: str = DEFAULT_REGISTRY, *, timeout: float = 30.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._transport = transport

    def _client(self) -> httpx.Client:
        import httpx  # imported here: it costs start-up time when unused

        return httpx.Client(timeout=self.timeout, transport=self._transport,
                            follow_redirects=True,
                            headers={"Accept": "application/json",
                                     "User-Agent": "workbench (extension installer)"})

    def _get_json(self, url: str, params: dict[str, Any] | None = None,
                  *, missing: str | None = None) -> Any:
        import httpx  # imported here: it costs start-up time when unused

        try:
            with self._client() as client, client.stream("GET", url, params=params) as answer:
                if answer.status_code == 404 and missing:
                    raise RegistryError(missing, where=url)
                if answer.status_code != 200:
                    raise RegistryError(f"the registry answered {answer.status_code} "
                                        f"{answer.reason_phrase}", where=url)
                body = bytearray()
                for chunk in answer.iter_bytes():
                    body += chunk
                    if len(body) > MAX_PACKUMENT_BYTES:
                        raise RegistryError("the registry's answer is larger than "
                                            f"{MAX_PACKUMENT_BYTES} bytes", where=url)
        except httpx.TimeoutException:
            raise RegistryError(f"the registry did not answer within {self.timeout:g} s",
                                where=url) from None
        except httpx.HTTPError as exc:
            raise RegistryError(f"cannot reach the registry: {exc}", where=url) from None
        try:
            return json.loads(bytes(body))
        except (ValueError, UnicodeDecodeError) as exc:
            raise RegistryError(f"the registry's answer is not valid JSON ({exc})",
                                where=url) from None

    def packument(self, name: str) -> dict[str, Any]:
        """The registry's document of ``name``: every version, dist-tags, metadata.

        Raises:
            RegistryError: Unknown package, network failure or an answer that is not
                a JSON object.
        """
        url = package_url(self.base_url, name)
        data = self._get_json(url, missing=f"there is no package named {name!r} on the "
                                           f"registry {self.base_url}")
        if not isinstance(data, dict) or not isinstance(data.get("versions"), dict):
            raise RegistryError("the registry's answer is not a package document "
                                "(no 'versions' object)", where=url)
        return data

    def resolve(self, name: str, spec: str | None = None) -> PackageVersion:
        """Pick one version of a package.

        Args:
            name: The package name.
            spec: An exact version, a dist-tag, a semver range, or None for
                ``dist-tags.latest``.

        Returns:
            The chosen version with its tarball URL and checksums.

        Raises:
            RegistryError: No version matches, or the document lacks what is needed.
        """
        doc = self.packument(name)
        url = package_url(self.base_url, name)
        versions: dict[str, Any] = doc["versions"]
        tags = doc.get("dist-tags") if isinstance(doc.get("dist-tags"), dict) else {}
        wanted = spec or "latest"
        if wanted in versions and parse_version(wanted) is not None:
            chosen = wanted
        elif wanted in tags:
            chosen = str(tags[wanted])
        elif spec is None:
            raise RegistryError(f"{name} has no 'latest' dist-tag; name a version "
                                f"(npm:{name}@VERSION)", where=url)
        else:
            try:
                found = max_satisfying(versions, wanted)
            except ValueError:
                raise RegistryError(f"{wanted!r} is neither a version, a dist-tag nor a "
                                    f"range of {name}", where=url) from None
            if found is None:
                listed = ", ".join(sorted(versions, key=_version_key)[-5:]) or "none"
                raise RegistryError(f"no version of {name} matches {wanted!r} (latest "
                                    f"versions: {listed})", where=url)
            chosen = found
        meta = versions.get(chosen)
        if not isinstance(meta, dict):
            raise RegistryError(f"the document of {name} does not describe version {chosen}",
                                where=url)
        dist = meta.get("dist") if isinstance(meta.get("dist"), dict) else {}
        tarball = dist.get("tarball")
        if not isinstance(tarball, str) or not tarball:
            raise RegistryError(f"{name}@{chosen} has no dist.tarball", where=url)
        return PackageVersion(
            name=name, version=chosen, tarball=tarball,
            integrity=dist.get("integrity") if isinstance(dist.get("integrity"), str) else None,
            shasum=dist.get("shasum") if isinstance(dist.get("shasum"), str) else None,
            description=str(meta.get("description") or doc.get("description") or ""))

    def download(self, version: PackageVersion, dest: Path) -> Path:
        """Download a version's tarball to ``dest`` and check it against the registry.

        Nothing is unpacked here; on any failure ``dest`` is deleted.

        Args:
            version: What :meth:`resolve` returned.
            dest: The file to write (a new file in a staging folder).

        Returns:
            ``dest``, whose bytes match the registry's checksum.

        Raises:
            IntegrityError: The bytes do not match, or there is no checksum to match.
            RegistryError: The download failed or was larger than allowed.
        """
        import httpx  # imported here: it costs start-up time when unused

        expected = expected_checksum(version)
        hasher = hashlib.new(expected.algorithm)
        url = version.tarball
        try:
            with self._client() as client, client.stream("GET", url) as answer, \
                    dest.open("xb") as out:
                if answer.status_code != 200:
                    raise RegistryError(f"the tarball download answered {answer.status_code} "
                                        f"{answer.reason_phrase}", where=url)
                size = 0
                for chunk in answer.iter_bytes():
                    size += len(chunk)
                    if size > MAX_TARBALL_BYTES:
                        raise RegistryError(f"the tarball is larger than {MAX_TARBALL_BYTES} "
                                            "bytes", where=url)
                    hasher.update(chunk)
                    out.write(chunk)
            if hasher.digest() != expected.digest:
                actual = Checksum(expected.algorithm, hasher.digest())
                raise IntegrityError(
                    f"the downloaded {version.name}@{version.version} does not match the "
                    f"registry's checksum (expected {expected.describe()}, got "
                    f"{actual.describe()}); it was not unpacked", where=url)
        except httpx.TimeoutException:
            dest.unlink(missing_ok=True)
            raise RegistryError(f"the download stalled for more than {self.timeout:g} s",
                                where=url) from None
        except httpx.HTTPError as exc:
            dest.unlink(missing_ok=True)
            raise RegistryError(f"cannot download the tarball: {exc}", where=url) from None
        except BaseException:
            dest.unlink(missing_ok=True)
            raise
        return dest

    def search(self, words: Iterable[str] = (), *, limit: int = 20) -> list[SearchResult]:
        """Find extension packages by keyword, optionally narrowed by words.

        Args:
            words: Extra search words (matched by the registry in names, descriptions
                and keywords).
            limit: The most results returned.

        Returns:
            Packages in the registry's order, the ``loca-extension`` ones first, each
            name once.

        Raises:
            RegistryError: The registry cannot be reached or answers nonsense.
        """
        text = " ".join(word for word in words if word.strip())
        found: dict[str, SearchResult] = {}
        url = f"{self.base_url}/-/v1/search"
        for keyword in SEARCH_KEYWORDS:
            query = f"keywords:{keyword}" + (f" {text}" if text else "")
            data = self._get_json(url, params={"text": query, "size": limit})
            objects = data.get("objects") if isinstance(data, dict) else None
            if not isinstance(objects, list):
                raise RegistryError("the search answer has no 'objects' list", where=url)
            for item in objects:
                package = item.get("package") if isinstance(item, dict) else None
                if not isinstance(package, dict) or not isinstance(package.get("name"), str):
                    continue
                name = package["name"]
                if name in found:
                    continue
                keywords = package.get("keywords")
                found[name] = SearchResult(
                    name=name, description=str(package.get("description") or ""),
                    version=str(package.get("version") or ""),
                    keywords=tuple(str(k) for k in keywords) if isinstance(keywords, list)
                    else ())
        return list(found.values())[:limit]


def _version_key(text: str) -> tuple:
    parsed = parse_version(text)
    return (0,) if parsed is None else (1, parsed.key())
