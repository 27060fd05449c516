#!/usr/bin/env bash
# WebSocket conformance: runs the Autobahn|Testsuite fuzzing-client cases 1–10 (kosoku, from
# PyPI) against `switchboard ws-echo` on 127.0.0.1 and fails when any case ends FAILED (or
# UNIMPLEMENTED). Compression (12.*, 13.*) is out of scope: no permessage-deflate.
#   tools/conformance.sh [report-dir]     (default .build/conformance)
set -euo pipefail
cd "$(dirname "$0")/.."
reports="${1:-.build/conformance}"

# Pinned, like the test suite's packages (tools/requirements.txt): another release may run other
# cases or judge them otherwise.
kosoku_version=0.1.0
if [ "$(python3 -m pip show kosoku 2>/dev/null | sed -n 's/^Version: //p')" != "$kosoku_version" ]; then
    python3 -m pip install --quiet --disable-pip-version-check "kosoku==$kosoku_version"
    # pyenv puts new console scripts on PATH only after a rehash.
    if command -v pyenv >/dev/null; then pyenv rehash || true; fi
fi
kosoku="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')/kosoku"
[ -x "$kosoku" ] || kosoku="$(command -v kosoku)"
swift build --product switchboard
binary="$(swift build --product switchboard --show-bin-path)/switchboard"

rm -rf "$reports"
mkdir -p "$reports"
"$binary" ws-echo --listen 127.0.0.1:0 >"$reports/echo.out" 2>"$reports/echo.err" &
echo_pid=$!
trap 'kill "$echo_pid" 2>/dev/null || true; wait "$echo_pid" 2>/dev/null || true' EXIT

for _ in $(seq 100); do
    grep -q '^ws://' "$reports/echo.out" 2>/dev/null && break
    kill -0 "$echo_pid" 2>/dev/null || { cat "$reports/echo.err" >&2; exit 1; }
    sleep 0.1
done
address="$(sed -n 's|^ws://||p' "$reports/echo.out")"
[ -n "$address" ] || { echo "ws-echo did not start" >&2; exit 1; }

timeout 600 "$kosoku" -x '12.*' -x '13.*' -o "$reports" "$address"

python3 - "$reports/index.json" <<'PY'
import collections, json, sys
results = json.load(open(sys.argv[1]))
cases = {case: result for server in results.values() for case, result in server.items()}
counts = collections.Counter(result["behavior"] for result in cases.values())
print("conformance:", ", ".join(f"{n} {b}" for b, n in sorted(counts.items())), f"({len(cases)} cases)")
bad = sorted(case for case, result in cases.items()
             if result["behavior"] in ("FAILED", "UNIMPLEMENTED")
             or result.get("behaviorClose") in ("FAILED", "UNIMPLEMENTED"))
if bad or not cases:
    print("failed cases:", " ".join(bad) or "none ran", file=sys.stderr)
    sys.exit(1)
PY
