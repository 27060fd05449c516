#!/usr/bin/env bash
# Two server binaries measured at the same time, side by side: each on core 0 with its own C load
# generator on core 1 (tools/reference/switchboard_p2p.c or switchboard_fanout.c, the programs
# tools/bench-reference.sh drives Switchboard with), started together and run for the same
# seconds. Both see the same machine at every moment, so the ratio of their server CPU per
# delivery keeps to a few percent where runs in turn (tools/bench-ab.sh) spread over tens of
# percent on a shared host: two runs of one binary this way came out 0.996–1.034.
#
#   tools/bench-pair.sh BEFORE_BINARY AFTER_BINARY [rounds] [p2p|fanout|many|lock]   # 5 rounds, p2p
#
# `lock` drives each server with this tree's switchboard-bench instead (`--scenario lock`, one
# lock handed over between LOCK_CONTENDERS contenders, 10 by default; built if missing) and
# compares server CPU per acquire/release pair; `many` drives each with its many-to-many scenario
# (10 publishers to 10 subscribers of one channel, as tools/bench.sh runs it). Each binary is a `switchboard` (a copy of an
# earlier release build, say). Prints one line per round (the two costs and after ÷ before),
# then the median ratio. Needs gcc. Servers listen on free loopback ports and are stopped by
# their PIDs.
set -euo pipefail
cd "$(dirname "$0")/.."

BEFORE="$1"
AFTER="$2"
ROUNDS="${3:-5}"
KIND="${4:-p2p}"
DURATION="${PAIR_DURATION:-8}"
COST=server_cpu_ns_per_delivery UNIT=ns
case "$KIND" in
p2p) GENERATOR=switchboard_p2p TRAFFIC=(--pairs 50 --payload 100 --window 64) ;;
fanout) GENERATOR=switchboard_fanout TRAFFIC=(--subscribers 100 --payload 100 --window 64) ;;
lock) GENERATOR=switchboard-bench TRAFFIC=(--scenario lock --publishers "${LOCK_CONTENDERS:-10}") COST=server_cpu_us_per_pair UNIT=µs ;;
many) GENERATOR=switchboard-bench TRAFFIC=(--scenario many-to-many --publishers 10 --subscribers 10 --payload 100 --rate 0) ;;
*) echo "bench-pair: kind is p2p, fanout, many or lock, not '$KIND'" >&2; exit 2 ;;
esac
command -v gcc >/dev/null || { echo "bench-pair: needs gcc" >&2; exit 2; }

WORK="$(mktemp -d /tmp/switchboard-pair.XXXXXX)"
# shellcheck source=tools/bench-server.sh
source tools/bench-server.sh  # free_port, wait_for_port
PIDS=()
stop_all() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    PIDS=()
}
trap 'stop_all; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM
if [[ "$GENERATOR" == switchboard-bench ]]; then
    [[ -x .build/release/switchboard-bench ]] || swift build -c release --product switchboard-bench >&2
    cp .build/release/switchboard-bench "$WORK/$GENERATOR"
else
    gcc -O2 -Wall -Wextra -o "$WORK/$GENERATOR" "tools/reference/$GENERATOR.c"
fi

RATIOS=()
for round in $(seq "$ROUNDS"); do
    declare -A PORT=() SERVER=() CLIENT=()
    for side in before after; do
        binary="$BEFORE"
        [[ "$side" == after ]] && binary="$AFTER"
        PORT[$side]="$(free_port)"
        rm -rf "$WORK/data-$side"
        taskset -c 0 "$binary" serve --listen "127.0.0.1:${PORT[$side]}" --admin-listen off --no-rate-limits \
            --log-level warning --data-dir "$WORK/data-$side" >"$WORK/server-$side.log" 2>&1 &
        SERVER[$side]=$!
        PIDS+=("${SERVER[$side]}")
    done
    for side in before after; do wait_for_port "${PORT[$side]}" "$WORK/server-$side.log"; done
    for side in before after; do
        if [[ "$GENERATOR" == switchboard-bench ]]; then
            taskset -c 1 "$WORK/$GENERATOR" --url "ws://127.0.0.1:${PORT[$side]}" --server-pid "${SERVER[$side]}" \
                "${TRAFFIC[@]}" --duration "$DURATION" --label "$side" >"$WORK/$side.json" &
        else
            taskset -c 1 "$WORK/$GENERATOR" --port "${PORT[$side]}" --server-pid "${SERVER[$side]}" "${TRAFFIC[@]}" \
                --duration "$DURATION" --warmup 1 --label "$side" >"$WORK/$side.json" &
        fi
        CLIENT[$side]=$!
    done
    wait "${CLIENT[before]}" "${CLIENT[after]}"
    stop_all
    line="$(python3 - "$WORK/before.json" "$WORK/after.json" "$round" "$COST" "$UNIT" <<'EOF'
import json, sys
cost = [json.loads(open(path).read().strip().splitlines()[-1]) for path in sys.argv[1:3]]
lost = sum(c.get("lost", 0) for c in cost)
key, unit = sys.argv[4], sys.argv[5]
a, b = (c[key] for c in cost)
print(f"{b / a:.3f} round {sys.argv[3]}: before {a:,} {unit}, after {b:,} {unit}, after/before {b / a:.3f}"
      + (f", lost {lost}" if lost else ""))
EOF
)"
    echo "${line#* }"
    RATIOS+=("${line%% *}")
done
python3 - "$KIND" "${RATIOS[@]}" <<'EOF'
import statistics, sys
ratios = [float(r) for r in sys.argv[2:]]
print(f"{sys.argv[1]}: after/before median {statistics.median(ratios):.3f} over {len(ratios)} rounds "
      f"({min(ratios):.3f}–{max(ratios):.3f})")
EOF
