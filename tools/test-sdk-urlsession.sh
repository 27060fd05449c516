#!/usr/bin/env bash
# Runs the SDK's tests (SwitchboardClientTests) with every end-to-end client on the URLSession
# transport (SWITCHBOARD_SDK_TRANSPORT=urlSession), where FoundationNetworking can speak
# WebSocket. On Linux that takes two things, checked first:
#   1. a FoundationNetworking built against libcurl 7.86+ headers: its library then calls
#      curl_ws_recv and curl_ws_send. The swift.org 6.3.1 toolchain for Debian 12 does not, so
#      every URLSessionWebSocketTask fails with "WebSockets not supported by libcurl" whatever
#      libcurl is loaded;
#   2. a libcurl at run time whose protocols include ws (Debian 12's 7.88 is built without).
#      Give one with LIBCURL_WS_DIR=<dir holding libcurl.so.4> (built with --enable-websockets
#      and --enable-versioned-symbols, whose CURL_OPENSSL_4 symbols FoundationNetworking wants).
# Exits 77 (skipped) with the reason when either is missing. The tests that set tlsCAFile or an
# http proxy pin the epoll transport's behaviour and are left out: FoundationNetworking refuses both.
#   tools/test-sdk-urlsession.sh [swift test arguments …]
set -euo pipefail
cd "$(dirname "$0")/.."

runtime="$(swift -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["paths"]["runtimeResourcePath"])')"
networking="$runtime/linux/libFoundationNetworking.so"
if [ "$(uname -s)" = Linux ]; then
    if ! nm -D "$networking" | grep -q ' U curl_ws_recv'; then
        echo "skipped: $networking was built without libcurl's WebSocket API (no curl_ws_recv)," >&2
        echo "so URLSessionWebSocketTask cannot work with this toolchain on Linux." >&2
        exit 77
    fi
    if [ -n "${LIBCURL_WS_DIR:-}" ]; then export LD_LIBRARY_PATH="$LIBCURL_WS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
    if ! python3 - <<'PY'
import ctypes, sys
curl = ctypes.CDLL("libcurl.so.4")
class Info(ctypes.Structure):
    _fields_ = [("age", ctypes.c_int), ("version", ctypes.c_char_p), ("version_num", ctypes.c_uint),
                ("host", ctypes.c_char_p), ("features", ctypes.c_int), ("ssl_version", ctypes.c_char_p),
                ("ssl_version_num", ctypes.c_long), ("libz_version", ctypes.c_char_p),
                ("protocols", ctypes.POINTER(ctypes.c_char_p))]
curl.curl_version_info.restype = ctypes.POINTER(Info)
info = curl.curl_version_info(10).contents
protocols, index = [], 0
while info.protocols[index]:
    protocols.append(info.protocols[index].decode())
    index += 1
sys.exit(0 if "ws" in protocols else 1)
PY
    then
        echo "skipped: the libcurl.so.4 loaded here has no ws protocol; set LIBCURL_WS_DIR to one that has" >&2
        exit 77
    fi
fi

export SWITCHBOARD_SDK_TRANSPORT=urlSession
exec tools/test.sh --filter SwitchboardClientTests --skip 'TLSLoginTests|anHTTPProxyConfigCarriesTheConnection' "$@"
