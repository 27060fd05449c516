#!/usr/bin/env bash
# Runs the module scenarios (presence, storage, stream-channel topics, locks) against a release
# build of the server on 127.0.0.1 and rewrites their generated blocks in docs/BENCHMARKS.md.
#
#   tools/bench-modules.sh                          # every module, about 15 minutes
#   MODULES="storage topics" tools/bench-modules.sh  # some modules; the others' blocks stay
#   BENCH_RUNS=1 tools/bench-modules.sh             # one run per scenario instead of 3
#   BENCH_NO_DOC=1 tools/bench-modules.sh           # print the JSON lines, leave the document alone
#
# Each scenario gets a fresh server (--no-rate-limits, metadata in SQLite under a fresh
# --data-dir), killed by its PID afterwards. Scenarios compared with each other run alternately.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT="${BENCH_PORT:-19450}"
RUNS="${BENCH_RUNS:-3}"
MODULES="${MODULES:-presence storage topics locks}"
# shellcheck source=tools/bench-server.sh
source tools/bench-server.sh
bench_setup switchboard-bench-modules

wanted() { [[ " $MODULES " == *" $1 "* ]]; }

if wanted presence; then
    # A fresh server for each run, so that its memory before and after is this run's.
    for _ in $(seq "$RUNS"); do
        bench presence-10k 1 --scenario presence --connections 10000 --publishers 4 --duration 5
    done
fi

if wanted storage; then
    bench storage-write-1 "$RUNS" --scenario storage-write --publishers 1 --window 1 --payload 100 --duration 5
    bench storage-write-16 "$RUNS" --scenario storage-write --publishers 16 --window 1 --payload 100 --duration 5
    bench storage-read-1 "$RUNS" --scenario storage-read --publishers 1 --window 1 --payload 100 --duration 5
    bench storage-read-16 "$RUNS" --scenario storage-read --publishers 16 --window 1 --payload 100 --duration 5
    bench storage-events-1w "$RUNS" --scenario storage-fanout --publishers 1 --window 1 --subscribers 100 --payload 100 --duration 5
    bench storage-events-16w "$RUNS" --scenario storage-fanout --publishers 16 --window 1 --subscribers 100 --payload 100 --duration 5
fi

if wanted topics; then
    for _ in $(seq "$RUNS"); do
        bench fanout-max 1 --scenario fanout --subscribers 100 --payload 100 --rate 0 --duration 5
        bench topic-fanout-max 1 --scenario topic-fanout --subscribers 100 --payload 100 --rate 0 --duration 5
    done
    bench fanout-200 "$RUNS" --scenario fanout --subscribers 100 --payload 100 --rate 200 --duration 10
    bench topic-200 "$RUNS" --scenario topic-fanout --subscribers 100 --payload 100 --rate 200 --duration 10
fi

if wanted locks; then
    bench lock-10 "$RUNS" --scenario lock --publishers 10 --duration 5
    bench lock-100 "$RUNS" --scenario lock --publishers 100 --duration 5
fi

if [[ -n "${BENCH_NO_DOC:-}" ]]; then exit 0; fi

write_machine
python3 tools/bench_modules_report.py "$WORK" docs/BENCHMARKS.md
echo "docs/BENCHMARKS.md rewritten" >&2
