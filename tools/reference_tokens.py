#!/usr/bin/env python3
"""Mints an RTM login token with the reference's own token builder (PyPI `agora-token-builder`).

    python3 tools/reference_tokens.py APP_ID CERTIFICATE USER_ACCOUNT PRIVILEGE_EXPIRED_TS [SALT TS]

Prints the 006 token `RtmTokenBuilder.buildToken(APP_ID, CERTIFICATE, USER_ACCOUNT, Role_Rtm_User,
PRIVILEGE_EXPIRED_TS)` returns. With SALT and TS, the builder's random salt and its timestamp
(now + 24 h) are replaced by those, so the token is the same on every run.
Exits 0 with the token, 2 on bad arguments or a missing package.
"""

import sys

from pydeps import require

require("agora_token_builder")

from agora_token_builder.AccessToken import AccessToken, kRtmLogin  # noqa: E402
from agora_token_builder.RtmTokenBuilder import Role_Rtm_User, RtmTokenBuilder  # noqa: E402


def main(arguments):
    if len(arguments) not in (4, 6):
        sys.exit(__doc__)
    app_id, certificate, account, expire = arguments[:4]
    if len(arguments) == 4:
        print(RtmTokenBuilder.buildToken(app_id, certificate, account, Role_Rtm_User, int(expire)))
        return
    # What buildToken does, with the salt and timestamp fixed.
    token = AccessToken(app_id, certificate, account, "")
    token.salt, token.ts = int(arguments[4]), int(arguments[5])
    token.addPrivilege(kRtmLogin, int(expire))
    print(token.build())


if __name__ == "__main__":
    main(sys.argv[1:])
