"""The digest of a bundle: sha256 over one canonical JSON text of its manifest and files.

The encoding (docs/bundles.md says it for anyone recomputing it): the object
``{"files": {PATH: TEXT, ...}, "manifest": MANIFEST}`` written as JSON with

- every object's keys sorted by Unicode code point, at every level;
- no whitespace between tokens (``,`` and ``:`` alone);
- strings as ``JSON.stringify`` writes them: ``"`` and ``\\`` escaped, ``\\b \\f \\n \\r \\t``
  short, every other code point below U+0020 as ``\\u00xx`` (lowercase hex), everything
  else as itself (no ``\\u`` escape for non-ASCII);
- integers in decimal; the manifest holds no other numbers than integers and decimal
  fractions ``repr`` and ``JSON.stringify`` write alike (checked by ``manifest.py``);
- ``true``, ``false``, ``null``;

then encoded as UTF-8 and hashed with SHA-256, written as 64 lowercase hex digits.
The same text is what ``JSON.stringify`` gives for an object whose keys were inserted
in that order, so a Node one-liner recomputes it (``tests/bundles/test_digest.py``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def canonical(value: Any) -> bytes:
    """``value`` in the canonical encoding (see the module docstring), as UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def digest(manifest: Mapping[str, Any], files: Mapping[str, str]) -> str:
    """The bundle's digest: 64 lowercase hex digits."""
    return hashlib.sha256(canonical({"files": dict(files), "manifest": dict(manifest)})).hexdigest()
