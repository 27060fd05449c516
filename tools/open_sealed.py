#!/usr/bin/env python3
"""Opens a body sealed by the Switchboard SDK's client-side encryption (docs/PROTOCOL.md section 9).

    python3 tools/open_sealed.py --mode AES256GCM --key KEY --salt SALT_HEX SEALED_HEX
    python3 tools/open_sealed.py --mode 1 --key KEY --salt SALT_HEX --base64 SEALED_BASE64

Prints the original body: a string message as its text, a binary message as lowercase hex. With
--kind, prints the kind ("string" or "binary") on a line of its own first. --base64 reads the sealed
bytes as standard base64 (the form used for str fields) instead of hex.

Needs PyPI's `cryptography`, pinned in tools/requirements.txt (tools/test.sh installs it); PBKDF2 comes from hashlib.
Exits 0 when the body opened, 1 when it did not (wrong key, mode or salt; changed bytes), 2 on bad
arguments.
"""

import argparse
import base64
import binascii
import hashlib
import sys

from pydeps import require

require("cryptography")

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

ITERATIONS = 10_000
SALT_BYTES = 32
KEY_BYTES = {"AES128GCM": 16, "AES256GCM": 32}
MODE_NUMBERS = {"1": "AES128GCM", "2": "AES256GCM"}
VERSION = 0x01
NONCE_BYTES = 12
TAG_BYTES = 16
KINDS = {0x01: "string", 0x02: "binary"}


def derive_key(mode, key, salt):
    """PBKDF2-HMAC-SHA256 over the UTF-8 key string and the 32-byte salt."""
    return hashlib.pbkdf2_hmac("sha256", key.encode("utf-8"), salt, ITERATIONS, KEY_BYTES[mode])


def open_sealed(mode, key, salt, sealed):
    """Returns (kind, body) of a sealed body; raises ValueError when it does not open."""
    if len(sealed) < 1 + NONCE_BYTES + TAG_BYTES:
        raise ValueError("sealed body too short")
    if sealed[0] != VERSION:
        raise ValueError(f"unknown sealed payload version {sealed[0]}")
    nonce = sealed[1:1 + NONCE_BYTES]
    try:
        plaintext = AESGCM(derive_key(mode, key, salt)).decrypt(nonce, sealed[1 + NONCE_BYTES:], None)
    except InvalidTag:
        raise ValueError("authentication failed: wrong key, mode or salt, or changed bytes") from None
    if not plaintext or plaintext[0] not in KINDS:
        raise ValueError("unknown body kind")
    return KINDS[plaintext[0]], plaintext[1:]


def main():
    parser = argparse.ArgumentParser(description="Open a body sealed by the Switchboard SDK.")
    parser.add_argument("--mode", required=True, help="AES128GCM or AES256GCM (or 1, 2)")
    parser.add_argument("--key", required=True, help="the encryptionKey string")
    parser.add_argument("--salt", required=True, help="the 32-byte encryptionKdfSalt, in hex")
    parser.add_argument("--base64", action="store_true", help="the sealed body is base64, not hex")
    parser.add_argument("--kind", action="store_true", help="print the body's kind first")
    parser.add_argument("sealed", help="the sealed body, in hex (or base64 with --base64)")
    args = parser.parse_args()

    mode = MODE_NUMBERS.get(args.mode, args.mode)
    if mode not in KEY_BYTES:
        parser.error(f"unknown mode {args.mode}")
    if not args.key:
        parser.error("the key is empty")
    try:
        salt = bytes.fromhex(args.salt)
        sealed = base64.b64decode(args.sealed, validate=True) if args.base64 else bytes.fromhex(args.sealed)
    except (ValueError, binascii.Error) as error:
        parser.error(f"cannot read the salt or the sealed body: {error}")
    if len(salt) != SALT_BYTES:
        parser.error(f"the salt must be {SALT_BYTES} bytes, got {len(salt)}")

    try:
        kind, body = open_sealed(mode, args.key, salt, sealed)
    except ValueError as error:
        print(f"cannot open: {error}", file=sys.stderr)
        return 1
    if args.kind:
        print(kind)
    if kind == "string":
        sys.stdout.buffer.write(body + b"\n")
    else:
        print(body.hex())
    return 0


if __name__ == "__main__":
    sys.exit(main())
