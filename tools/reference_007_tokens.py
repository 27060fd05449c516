#!/usr/bin/env python3
"""Mints 007 access tokens (the reference's AccessToken2) with Python's standard library only,
written from the format's description, independently of the Swift minter.

    python3 tools/reference_007_tokens.py APP_ID CERTIFICATE ISSUE_TS EXPIRE SALT SERVICE...

SERVICE is `rtm:USER:LOGIN_SECONDS` (an RTM service granting login for that long) or
`rtc:CHANNEL:UID:PRIVILEGE=SECONDS[,PRIVILEGE=SECONDS...]` (an RTC service; privilege 1 is
joinChannel). Services are written in the order given. Prints the token. With `--vectors`, prints
the test vectors of Tests/SwitchboardCryptoTests/TokenReferenceVectorTests.swift, one `name token`
a line. Exits 0 with the token, 2 on bad arguments.

The format: "007" + base64(zlib(packed signature + signing info)), where signing info is the
packed app id, issue ts, expire, salt and services, all little-endian, strings and byte strings
prefixed with their uint16 length; the signature is HMAC-SHA256 of the signing info under
HMAC(salt, HMAC(issue ts, certificate)).
"""

import base64
import hashlib
import hmac
import struct
import sys
import zlib

VERSION = "007"
SERVICE_RTC = 1
SERVICE_RTM = 2
RTM_LOGIN = 1

APP_ID = "970CA35de60c44645bbae8a215061b33"
CERTIFICATE = "5CFd2fd1755d40ecb72977518be15d3b"
VECTORS = {
    # user "alice": issueTs 1700000000, expire 3600, salt 99999, RTM login privilege 3600.
    "alice007": (1700000000, 3600, 99999, ["rtm:alice:3600"]),
    # user "bob": an RTC service (channel "room", uid "bob", joinChannel for 600 s), then RTM login for 1800 s.
    "bob007WithRTC": (1700000000, 86400, 42, ["rtc:room:bob:1=600", "rtm:bob:1800"]),
}


def uint16(value):
    return struct.pack("<H", value)


def uint32(value):
    return struct.pack("<I", value)


def packed(data):
    """A byte string (or UTF-8 string) with its uint16 length before it."""
    data = data.encode() if isinstance(data, str) else data
    return uint16(len(data)) + data


def privileges(entries):
    """A map of uint16 privilege → uint32 seconds, in key order."""
    return uint16(len(entries)) + b"".join(uint16(key) + uint32(entries[key]) for key in sorted(entries))


def service(text):
    """The packed service a SERVICE argument describes."""
    kind, _, rest = text.partition(":")
    if kind == "rtm":
        user, seconds = rest.rsplit(":", 1)
        return uint16(SERVICE_RTM) + privileges({RTM_LOGIN: int(seconds)}) + packed(user)
    if kind == "rtc":
        channel, uid, grants = rest.split(":")
        entries = {int(key): int(value) for key, value in (grant.split("=") for grant in grants.split(","))}
        return uint16(SERVICE_RTC) + privileges(entries) + packed(channel) + packed(uid)
    raise ValueError(f"unknown service {text!r}")


def mint(app_id, certificate, issue_ts, expire, salt, services):
    """The 007 token."""
    signing_info = packed(app_id) + uint32(issue_ts) + uint32(expire) + uint32(salt) + uint16(len(services))
    signing_info += b"".join(service(text) for text in services)
    key = hmac.new(uint32(issue_ts), certificate.encode(), hashlib.sha256).digest()
    key = hmac.new(uint32(salt), key, hashlib.sha256).digest()
    signature = hmac.new(key, signing_info, hashlib.sha256).digest()
    return VERSION + base64.b64encode(zlib.compress(packed(signature) + signing_info)).decode()


def main(arguments):
    if arguments == ["--vectors"]:
        for name, (issue_ts, expire, salt, services) in VECTORS.items():
            print(name, mint(APP_ID, CERTIFICATE, issue_ts, expire, salt, services))
        return 0
    if len(arguments) < 6:
        print(__doc__, file=sys.stderr)
        return 2
    app_id, certificate, issue_ts, expire, salt = arguments[:5]
    try:
        print(mint(app_id, certificate, int(issue_ts), int(expire), int(salt), arguments[5:]))
    except ValueError as error:
        print(f"{sys.argv[0]}: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
