#!/usr/bin/env bash
# Point-to-point next to a reference broker, in one run: alternating rounds of Switchboard
# (switchboard-bench --scenario point-to-point) and Redis pub/sub driven with the same traffic
# (tools/reference/redis_p2p.c: 50 pairs, 100-byte messages, 64 unanswered per sender). On a
# machine whose speed changes by the hour, the ratio of the two costs is what stays comparable.
#
#   tools/bench-reference.sh [rounds]        # 5 rounds by default, about 2 minutes
#   PIN=0 tools/bench-reference.sh           # server and load generator not pinned to a core each
#
# Needs redis-server (Debian: apt-get install -y redis-server) and gcc. Prints how fast the machine
# is at the moment (tools/reference/hostcheck.c), one JSON line per run, then the medians and the
# median of the rounds' ratios (Switchboard / Redis, server CPU per message, over each run and
# over its fastest second).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS="${1:-5}"
PORT="${BENCH_PORT:-19450}"
REDIS_PORT="${BENCH_REDIS_PORT:-19451}"
PIN="${PIN:-1}"
command -v redis-server >/dev/null || { echo "bench-reference: needs redis-server (apt-get install -y redis-server)" >&2; exit 2; }
command -v gcc >/dev/null || { echo "bench-reference: needs gcc" >&2; exit 2; }

# shellcheck source=tools/bench-server.sh
source tools/bench-server.sh
bench_setup switchboard-reference
REDIS_PID=""
stop_redis() {
    if [[ -n "$REDIS_PID" ]]; then
        kill "$REDIS_PID" 2>/dev/null || true
        wait "$REDIS_PID" 2>/dev/null || true
        REDIS_PID=""
    fi
}
trap 'stop_server; stop_redis; rm -rf "$WORK"' EXIT
# Pinned: servers on core 0, load generators on core 1.
SERVER_CORE="" SERVER_PIN=() LOAD_PIN=()
if [[ "$PIN" == 1 ]]; then SERVER_CORE=0 SERVER_PIN=(taskset -c 0) LOAD_PIN=(taskset -c 1); fi
gcc -O2 -Wall -Wextra -o "$WORK/redis_p2p" tools/reference/redis_p2p.c
gcc -O2 -Wall -Wextra -o "$WORK/hostcheck" tools/reference/hostcheck.c
# How fast the machine is now (tools/reference/hostcheck.c), on the server's core when pinned.
echo "host: $("${SERVER_PIN[@]}" "$WORK/hostcheck")"

REDIS_LABEL="redis $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/')"

for round in $(seq "$ROUNDS"); do
    echo "== round $round of $ROUNDS" >&2
    start_server "$SERVER" $SERVER_CORE
    "${LOAD_PIN[@]}" "$BENCH" --url "ws://127.0.0.1:$PORT" --server-pid "$SERVER_PID" --label switchboard \
        --scenario point-to-point --publishers 50 --payload 100 --rate 0 --duration 5 | tee -a "$RESULTS"
    stop_server

    "${SERVER_PIN[@]}" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
        --logfile "$WORK/redis.log" &
    REDIS_PID=$!
    wait_for_port "$REDIS_PORT" "$WORK/redis.log"
    "${LOAD_PIN[@]}" "$WORK/redis_p2p" --port "$REDIS_PORT" --server-pid "$REDIS_PID" --label "$REDIS_LABEL" \
        --pairs 50 --payload 100 --window 64 --duration 5 | tee -a "$RESULTS"
    stop_redis
done

python3 - "$RESULTS" "$COMMIT" "$PIN" <<'EOF'
import json, statistics, sys
lines = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
def runs(prefix, key): return [l[key] for l in lines if l["label"].startswith(prefix) and l.get(key)]
print(f"commit {sys.argv[2]}, {'pinned (server core 0, load core 1)' if sys.argv[3] == '1' else 'not pinned'}, "
      f"{len(runs('switchboard', 'publishes_per_s'))} rounds; medians of the rounds")
for key, what in (("server_cpu_ns_per_delivery", "the run"), ("server_cpu_ns_per_delivery_fastest_second", "its fastest second")):
    ours, redis = runs("switchboard", key), runs("redis", key)
    ratios = [a / b for a, b in zip(ours, redis)]
    print(f"server CPU per message over {what}: switchboard {statistics.median(ours):,.0f} ns, redis {statistics.median(redis):,.0f} ns, "
          f"ratio {statistics.median(ratios):.2f} (rounds: {', '.join(f'{r:.2f}' for r in ratios)})")
print(f"messages/s: switchboard {statistics.median(runs('switchboard', 'publishes_per_s')):,.0f}, "
      f"redis {statistics.median(runs('redis', 'publishes_per_s')):,.0f}")
EOF
