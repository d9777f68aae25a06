"""The ed25519 signature that vouches for the built-in extension shipped with workbench.

The signature covers the built-in's fingerprint lines (``path\\0sha256\\n`` for every
file, sorted; see :mod:`workbench.ext.fingerprint`), leaving out the ``SIGNATURE``
file itself and ``__pycache__``. It is stored in ``extensions/builtin/SIGNATURE`` as
one line ``ed25519:<hex>``; the public key is ``workbench/ext/builtin.pub`` (the raw
32-byte key in hex, or a PEM public key). ``scripts/sign_builtin.py`` writes both.

This module imports nothing of ours but ``workbench.ext``'s errors and fingerprint.
"""

from __future__ import annotations

from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from workbench.ext.errors import SignatureError
from workbench.ext.fingerprint import Fingerprint, fingerprint

SIGNATURE_NAME = "SIGNATURE"
"""The file beside the built-in's manifest that holds its signature."""

SIGNATURE_PREFIX = "ed25519:"

PUBLIC_KEY_PATH = Path(__file__).resolve().with_name("builtin.pub")
"""The public key the built-in is verified with, shipped in the package."""


def load_public_key(path: Path = PUBLIC_KEY_PATH) -> Ed25519PublicKey:
    """Read an ed25519 public key: 64 hex digits (the raw key) or a PEM block.

    Raises:
        SignatureError: The file is missing or holds no ed25519 public key.
    """
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise SignatureError(f"cannot read the built-in's public key: {exc}",
                             where=str(path)) from None
    try:
        if text.startswith("-----BEGIN"):
            key = serialization.load_pem_public_key(text.encode())
            if not isinstance(key, Ed25519PublicKey):
                raise ValueError("not an ed25519 key")
            return key
        return Ed25519PublicKey.from_public_bytes(bytes.fromhex(text))
    except ValueError as exc:
        raise SignatureError(f"not an ed25519 public key ({exc})", where=str(path)) from None


def public_key_hex(key: Ed25519PublicKey) -> str:
    """The raw 32-byte public key in hex, as ``builtin.pub`` holds it."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw.hex()


def signed_fingerprint(folder: Path) -> Fingerprint:
    """The fingerprint the signature covers: every file but ``SIGNATURE``."""
    return fingerprint(folder, exclude={SIGNATURE_NAME})


def sign_folder(folder: Path, private_key: Ed25519PrivateKey) -> Path:
    """Sign ``folder``'s files and write its ``SIGNATURE``.

    Returns:
        The signature file.
    """
    signature = private_key.sign(signed_fingerprint(folder).lines())
    path = folder / SIGNATURE_NAME
    path.write_text(SIGNATURE_PREFIX + signature.hex() + "\n", encoding="ascii")
    return path


def verify_folder(folder: Path, public_key: Ed25519PublicKey) -> Fingerprint:
    """Check that ``folder``'s files are exactly the ones signed.

    Args:
        folder: A copy of the built-in extension.
        public_key: The key to verify with.

    Returns:
        The signed fingerprint (every file but ``SIGNATURE``).

    Raises:
        SignatureError: ``SIGNATURE`` is missing or malformed, or does not match the
            files (one was changed, added or removed since signing).
    """
    path = folder / SIGNATURE_NAME
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        raise SignatureError("the built-in extension has no SIGNATURE file; refusing to "
                             "install it", where=str(folder)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SignatureError(f"cannot read the signature: {exc}", where=str(path)) from None
    if not text.startswith(SIGNATURE_PREFIX):
        raise SignatureError(f"the signature must start with {SIGNATURE_PREFIX!r}",
                             where=str(path))
    try:
        signature = bytes.fromhex(text[len(SIGNATURE_PREFIX):])
    except ValueError:
        raise SignatureError("the signature is not hex", where=str(path)) from None
    signed = signed_fingerprint(folder)
    try:
        public_key.verify(signature, signed.lines())
    except InvalidSignature:
        raise SignatureError("the built-in extension's files do not match their signature "
                             "(a file was changed, added or removed since it was signed); "
                             "refusing to install it", where=str(folder)) from None
    return signed
