#!/usr/bin/env bash
# A/B load runs of two builds of the server in one session, alternating, so both see the same
# machine load: `tools/bench-ab.sh BEFORE_TREE AFTER_TREE [rounds]` (each tree a checkout with a
# release build of `switchboard`; this tree's load generator drives both). Prints one JSON line
# per run, labelled `<scenario>@before` or `<scenario>@after`; compare medians.
# SCENARIOS="point-to-point" limits the runs to the scenarios named.
set -euo pipefail
cd "$(dirname "$0")/.."
BEFORE="$1"
AFTER="$2"
ROUNDS="${3:-3}"
PORT="${BENCH_PORT:-19500}"
WORK="$(mktemp -d /tmp/switchboard-ab.XXXXXX)"
SERVER_PID=""

stop_server() {
    if [[ -n "$SERVER_PID" ]]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=""
    fi
}
trap 'stop_server; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

swift build -c release --product switchboard-bench >&2
BENCH=.build/release/switchboard-bench

start_server() {
    rm -rf "$WORK/data"
    "$1/.build/release/switchboard" serve --listen "127.0.0.1:$PORT" --no-rate-limits --log-level warning \
        --data-dir "$WORK/data" >"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then return 0; fi
        sleep 0.05
    done
    echo "server in $1 did not start:" >&2
    cat "$WORK/server.log" >&2
    exit 1
}

run() {
    local side="$1" tree="$2" name="$3"
    shift 3
    start_server "$tree"
    "$BENCH" --url "ws://127.0.0.1:$PORT" --server-pid "$SERVER_PID" --label "$name@$side" "$@"
    stop_server
}

for round in $(seq "$ROUNDS"); do
    echo "== round $round of $ROUNDS" >&2
    for side in before after; do
        tree="$BEFORE"
        [[ "$side" == after ]] && tree="$AFTER"
        [[ " ${SCENARIOS:-fanout-max fanout-1k point-to-point} " == *" fanout-max "* ]] &&
            run "$side" "$tree" fanout-max --scenario fanout --subscribers 100 --payload 100 --rate 0 --duration 5
        [[ " ${SCENARIOS:-fanout-max fanout-1k point-to-point} " == *" fanout-1k "* ]] &&
            run "$side" "$tree" fanout-1k --scenario fanout --subscribers 100 --payload 100 --rate 1000 --duration 10
        [[ " ${SCENARIOS:-fanout-max fanout-1k point-to-point} " == *" point-to-point "* ]] &&
            run "$side" "$tree" point-to-point --scenario point-to-point --publishers 50 --payload 100 --rate 0 --duration 5
    done
done
