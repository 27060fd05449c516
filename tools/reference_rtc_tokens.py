#!/usr/bin/env python3
"""Mints an RTC token, as a stream channel's join takes, with the reference's own token builder
(PyPI `agora-token-builder`).

    python3 tools/reference_rtc_tokens.py APP_ID CERTIFICATE CHANNEL ACCOUNT PRIVILEGE_EXPIRED_TS

Prints the 006 token `RtcTokenBuilder.buildTokenWithAccount(APP_ID, CERTIFICATE, CHANNEL, ACCOUNT,
Role_Publisher, PRIVILEGE_EXPIRED_TS)` returns (an ACCOUNT of 0 is the builder's uid 0: any user).
Exits 0 with the token, 2 on bad arguments or a missing package.
"""

import sys

from pydeps import require

require("agora_token_builder")

from agora_token_builder.RtcTokenBuilder import Role_Publisher, RtcTokenBuilder  # noqa: E402


def main(arguments):
    if len(arguments) != 5:
        sys.exit(__doc__)
    app_id, certificate, channel, account, expire = arguments
    account = 0 if account == "0" else account
    print(RtcTokenBuilder.buildTokenWithAccount(app_id, certificate, channel, account, Role_Publisher, int(expire)))


if __name__ == "__main__":
    main(sys.argv[1:])
