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
# shellcheck source=tools/bench-server.sh
source tools/bench-server.sh
bench_setup switchboard-bench

MAX_CONNECTIONS=$(( FD_LIMIT - 200 < 50000 ? FD_LIMIT - 200 : 50000 ))

bench fanout-max "$RUNS" --scenario fanout --subscribers 100 --payload 100 --rate 0 --duration 5
bench fanout-1k "$RUNS" --scenario fanout --subscribers 100 --payload 100 --rate 1000 --duration 10
bench many-to-many "$RUNS" --scenario many-to-many --publishers 10 --subscribers 10 --payload 100 --rate 0 --duration 5
bench point-to-point "$RUNS" --scenario point-to-point --publishers 50 --payload 100 --rate 0 --duration 5
bench churn 1 --scenario churn --subscribers 100 --payload 100 --rate 1000 --churn-rate 100 --duration 10
bench idle-10k 1 --scenario idle --connections 10000
bench connections-max 1 --scenario idle --connections "$MAX_CONNECTIONS"

if [[ -n "${BENCH_NO_DOC:-}" ]]; then exit 0; fi

write_machine

python3 tools/bench_report.py "$WORK" docs/BENCHMARKS.md
echo "docs/BENCHMARKS.md rewritten" >&2
