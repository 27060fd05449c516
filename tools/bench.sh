#!/usr/bin/env bash
# Runs the standard load scenarios against a release build of the server on 127.0.0.1 and
# rewrites the generated part of docs/BENCHMARKS.md (machine, commit, commands, numbers).
#
#   tools/bench.sh                 # everything, about 6-8 minutes
#   BENCH_RUNS=1 tools/bench.sh    # one run per scenario instead of the median of 3
#   BENCH_NO_DOC=1 tools/bench.sh  # print the JSON lines, leave the document alone
#
# Each scenario gets a fresh server started with --no-rate-limits (the per-client limits of 60
# publishes per second would otherwise refuse most of the load), killed by its PID afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT="${BENCH_PORT:-19400}"
RUNS="${BENCH_RUNS:-3}"
WORK="$(mktemp -d /tmp/switchboard-bench.XXXXXX)"
RESULTS="$WORK/results.jsonl"
# shellcheck source=tools/bench-server.sh
source tools/bench-server.sh
trap 'stop_server; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# As many descriptors as we may have: the connection-count scenario needs one per connection in
# the server and one in the load generator. Root may raise the hard limit; otherwise we take the
# hard limit as it is and size the scenario to fit.
ulimit -n 200000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
FD_LIMIT="$(ulimit -n)"

swift build -c release >&2
# The commit the binaries were built from (sources may change while the scenarios run).
COMMIT="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift || echo ' (with uncommitted changes)')"
SERVER=.build/release/switchboard
BENCH=.build/release/switchboard-bench


# bench NAME RUNS ARGS...: a fresh server, RUNS runs of the load generator, one JSON line each.
bench() {
    local name="$1" runs="$2"
    shift 2
    echo "$name	switchboard-bench --url ws://127.0.0.1:$PORT --server-pid \$SERVER_PID $*" >>"$WORK/commands.tsv"
    start_server "$SERVER"
    for run in $(seq "$runs"); do
        echo "== $name, run $run of $runs" >&2
        "$BENCH" --url "ws://127.0.0.1:$PORT" --server-pid "$SERVER_PID" --label "$name" "$@" | tee -a "$RESULTS"
    done
    stop_server
}

MAX_CONNECTIONS=$(( FD_LIMIT - 200 < 50000 ? FD_LIMIT - 200 : 50000 ))

bench fanout-max "$RUNS" --scenario fanout --subscribers 100 --payload 100 --rate 0 --duration 5
bench fanout-1k "$RUNS" --scenario fanout --subscribers 100 --payload 100 --rate 1000 --duration 10
bench many-to-many "$RUNS" --scenario many-to-many --publishers 10 --subscribers 10 --payload 100 --rate 0 --duration 5
bench point-to-point "$RUNS" --scenario point-to-point --publishers 50 --payload 100 --rate 0 --duration 5
bench churn 1 --scenario churn --subscribers 100 --payload 100 --rate 1000 --churn-rate 100 --duration 10
bench idle-10k 1 --scenario idle --connections 10000
bench connections-max 1 --scenario idle --connections "$MAX_CONNECTIONS"

if [[ -n "${BENCH_NO_DOC:-}" ]]; then exit 0; fi

{
    echo "uname	$(uname -a)"
    echo "nproc	$(nproc)"
    echo "cpu	$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "memory	$(free -m | awk '/Mem:/ {print $2 " MB"}')"
    echo "commit	$COMMIT"
    echo "date	$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "swift	$(swift --version 2>/dev/null | head -1)"
    echo "fd_limit	$FD_LIMIT"
    echo "runs	$RUNS"
} >"$WORK/machine.tsv"

python3 tools/bench_report.py "$WORK" docs/BENCHMARKS.md
echo "docs/BENCHMARKS.md rewritten" >&2
