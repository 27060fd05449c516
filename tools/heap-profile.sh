#!/usr/bin/env bash
# The live heap of a server holding idle subscribed connections, by allocation site:
#   tools/heap-profile.sh [connections] [server-binary]      (default 5000; this tree's release build)
# Starts the server under heaptrack on a free loopback port, opens the connections with
# `switchboard-bench --scenario idle --idle-hold`, and once the load generator says it holds them,
# kills the server with SIGKILL: what heaptrack then reports as leaked is the live heap at that
# moment, each allocation with its stack (valgrind cannot read the DWARF 5 of Swift 6.3 binaries).
# Prints the total and the biggest sites in bytes per connection (tools/heap_summary.py); keeps
# the recording in $HEAP_OUT (default .build/heap) for heaptrack_print. Needs heaptrack
# (apt-get install -y heaptrack). Not part of `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."
CONNECTIONS="${1:-5000}"
SERVER="${2:-}"
OUT="${HEAP_OUT:-.build/heap}"
command -v heaptrack >/dev/null || { echo "needs heaptrack (apt-get install -y heaptrack)" >&2; exit 2; }
swift build -c release >&2
[[ -n "$SERVER" ]] || SERVER="$(swift build -c release --show-bin-path)/switchboard"
SERVER="$(realpath "$SERVER")"
BENCH="$(swift build -c release --show-bin-path)/switchboard-bench"
ulimit -n 200000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
(( CONNECTIONS + 64 <= $(ulimit -n) )) || { echo "$CONNECTIONS connections need more descriptors than $(ulimit -n)" >&2; exit 2; }
PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
rm -rf "$OUT" && mkdir -p "$OUT"

heaptrack -o "$OUT/server" "$SERVER" serve --listen "127.0.0.1:$PORT" --no-rate-limits --log-level warning \
    --data-dir "$OUT/data" >"$OUT/heaptrack.log" 2>&1 &
TRACKER=$!
SERVER_PID="" BENCH_PID=""
cleanup() {
    [[ -n "$BENCH_PID" ]] && kill "$BENCH_PID" 2>/dev/null || true
    [[ -n "$SERVER_PID" ]] && kill -9 "$SERVER_PID" 2>/dev/null || true
    wait "$TRACKER" 2>/dev/null || true
}
trap cleanup EXIT

# heaptrack starts the server as its child; its PID is the one to measure and to kill.
for _ in $(seq 200); do
    SERVER_PID="$(pgrep -P "$TRACKER" -f "serve --listen 127.0.0.1:$PORT" || true)"
    [[ -n "$SERVER_PID" ]] && (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    sleep 0.1
done
[[ -n "$SERVER_PID" ]] || { cat "$OUT/heaptrack.log" >&2; exit 2; }

"$BENCH" --url "ws://127.0.0.1:$PORT" --server-pid "$SERVER_PID" --scenario idle --connections "$CONNECTIONS" \
    --idle-hold 600 --label heap-profile >"$OUT/bench.json" 2>"$OUT/bench.err" &
BENCH_PID=$!
for _ in $(seq 1200); do
    grep -q '^holding' "$OUT/bench.err" && break
    kill -0 "$BENCH_PID" 2>/dev/null || { cat "$OUT/bench.err" >&2; exit 1; }
    sleep 0.5
done
grep -q '^holding' "$OUT/bench.err" || { echo "the connections were not all open after 10 minutes" >&2; exit 1; }
head -1 "$OUT/bench.err" >&2
kill -9 "$SERVER_PID"
SERVER_PID=""
wait "$TRACKER" 2>/dev/null || true
kill "$BENCH_PID" 2>/dev/null || true
BENCH_PID=""

heaptrack_print "$OUT"/server*.zst --print-peaks 0 --print-allocators 0 --print-temporary 0 --print-leaks 1 \
    --peak-limit 10 --sub-peak-limit 400 2>/dev/null | swift demangle --simplified >"$OUT/leaks.txt"
python3 tools/heap_summary.py "$CONNECTIONS" "${HEAP_TOP:-30}" <"$OUT/leaks.txt"
