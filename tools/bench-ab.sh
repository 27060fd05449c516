#!/usr/bin/env bash
# A/B load runs of two builds of the server in one session, alternating, so both see the same
# machine load: `tools/bench-ab.sh BEFORE_TREE AFTER_TREE [rounds]` (each tree a checkout with a
# release build of `switchboard`; this tree's load generator drives both). Prints one JSON line
# per run, labelled `<scenario>@before` or `<scenario>@after`; compare medians.
# SCENARIOS="point-to-point" limits the runs to the scenarios named; besides the default three,
# many-to-many, fanout-1m (1,000,000 deliveries/s), point-to-point-100k (100,000 messages/s) and
# idle-10k (10,000 idle logged-in connections: memory each, login rate).
# BEFORE_FLAGS and AFTER_FLAGS add `serve` options to one side (the same tree twice with and
# without an option: `AFTER_FLAGS="--webhook-url …" tools/bench-ab.sh . .`).
# PIN=1 runs the servers on core 0 and the load generator on core 1, as tools/bench-reference.sh
# does. BEFORE_SERVER names a server binary to use instead of the
# before tree's (a copy of an earlier build).
set -euo pipefail
cd "$(dirname "$0")/.."
BEFORE="$1"
AFTER="$2"
ROUNDS="${3:-3}"
BEFORE_FLAGS="${BEFORE_FLAGS:-}"
AFTER_FLAGS="${AFTER_FLAGS:-}"
PORT="${BENCH_PORT:-19500}"
PIN="${PIN:-0}"
SERVER_CORE="" LOAD_PIN=()
if [[ "$PIN" == 1 ]]; then SERVER_CORE=0 LOAD_PIN=(taskset -c 1); fi
WORK="$(mktemp -d /tmp/switchboard-ab.XXXXXX)"
# shellcheck source=tools/bench-server.sh
source tools/bench-server.sh
trap 'stop_server; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

swift build -c release --product switchboard-bench >&2
BENCH=.build/release/switchboard-bench

arguments() {
    case "$1" in
    fanout-max) echo "--scenario fanout --subscribers 100 --payload 100 --rate 0 --duration 5" ;;
    fanout-1k) echo "--scenario fanout --subscribers 100 --payload 100 --rate 1000 --duration 10" ;;
    fanout-1m) echo "--scenario fanout --subscribers 100 --payload 100 --rate 10000 --duration 5" ;;
    many-to-many) echo "--scenario many-to-many --publishers 10 --subscribers 10 --payload 100 --rate 0 --duration 5" ;;
    point-to-point) echo "--scenario point-to-point --publishers 50 --payload 100 --rate 0 --duration 5" ;;
    point-to-point-100k) echo "--scenario point-to-point --publishers 50 --payload 100 --rate 100000 --duration 5" ;;
    idle-10k) echo "--scenario idle --connections 10000" ;;
    *) echo "unknown scenario $1" >&2; exit 2 ;;
    esac
}

run() {
    local side="$1" tree="$2" name="$3"
    local flags="$BEFORE_FLAGS"
    [[ "$side" == after ]] && flags="$AFTER_FLAGS"
    local binary="$tree/.build/release/switchboard"
    [[ "$side" == before && -n "${BEFORE_SERVER:-}" ]] && binary="$BEFORE_SERVER"
    SERVER_FLAGS="$flags" start_server "$binary" $SERVER_CORE
    # shellcheck disable=SC2046
    "${LOAD_PIN[@]}" "$BENCH" --url "ws://127.0.0.1:$PORT" --server-pid "$SERVER_PID" --label "$name@$side" $(arguments "$name")
    stop_server
}

for round in $(seq "$ROUNDS"); do
    echo "== round $round of $ROUNDS" >&2
    for side in before after; do
        tree="$BEFORE"
        [[ "$side" == after ]] && tree="$AFTER"
        for name in ${SCENARIOS:-fanout-max fanout-1k point-to-point}; do run "$side" "$tree" "$name"; done
    done
done
