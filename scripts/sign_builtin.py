"""Sign the built-in extension, so workbench will install it.

workbench installs ``extensions/builtin`` on first start only if its files match the
ed25519 signature in ``extensions/builtin/SIGNATURE``, checked with the public key in
``workbench/ext/builtin.pub``. Run this after every change to the built-in:

    python scripts/sign_builtin.py [KEYFILE]

KEYFILE is the private key (PEM), by default ``~/.config/workbench-signing/ed25519.pem``;
it must live outside the repository. ``--new-key`` creates a new key pair at KEYFILE
(mode 0600) and rewrites ``workbench/ext/builtin.pub`` with its public half before signing.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from workbench.ext.errors import SignatureError  # noqa: E402  (the repository's own package)
from workbench.ext.signature import (  # noqa: E402
    PUBLIC_KEY_PATH,
    load_public_key,
    public_key_hex,
    sign_folder,
    verify_folder,
)

BUILTIN = REPO / "extensions" / "builtin"
DEFAULT_KEY = Path("~/.config/workbench-signing/ed25519.pem")


def _inside_repo(path: Path) -> bool:
    try:
        path.resolve().relative_to(REPO)
    except ValueError:
        return False
    return True


def _new_key(path: Path) -> Ed25519PrivateKey:
    if path.exists():
        sys.exit(f"error: {path} already exists; move it away first or sign without --new-key")
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(pem)
    PUBLIC_KEY_PATH.write_text(public_key_hex(key.public_key()) + "\n", encoding="ascii")
    print(f"created {path} and wrote its public key to {PUBLIC_KEY_PATH.relative_to(REPO)}")
    return key


def _load_key(path: Path) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except FileNotFoundError:
        sys.exit(f"error: {path} does not exist; pass --new-key to create a key there")
    except ValueError as exc:
        sys.exit(f"error: {path} is not a PEM private key ({exc})")
    if not isinstance(key, Ed25519PrivateKey):
        sys.exit(f"error: {path} is not an ed25519 key")
    return key


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("keyfile", nargs="?", type=Path, default=DEFAULT_KEY,
                        help=f"the ed25519 private key, PEM (default {DEFAULT_KEY})")
    parser.add_argument("--new-key", action="store_true",
                        help="create a new key pair at KEYFILE and rewrite builtin.pub")
    parser.add_argument("--folder", type=Path, default=BUILTIN,
                        help="the extension folder to sign (default extensions/builtin)")
    args = parser.parse_args(argv)
    keyfile = args.keyfile.expanduser()
    if _inside_repo(keyfile):
        sys.exit(f"error: {keyfile} is inside the repository; keep the private key outside it")
    key = _new_key(keyfile) if args.new_key else _load_key(keyfile)
    try:
        if public_key_hex(key.public_key()) != public_key_hex(load_public_key()):
            sys.exit(f"error: {keyfile} is not the key whose public half is in "
                     f"{PUBLIC_KEY_PATH.relative_to(REPO)}; use that key, or --new-key")
        signature = sign_folder(args.folder, key)
        verify_folder(args.folder, load_public_key())
    except SignatureError as exc:
        sys.exit(f"error: {exc}")
    print(f"signed {args.folder} -> {signature}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
