#!/usr/bin/env bash
# Many connections over three cluster nodes on this machine: `tools/bench-cluster-connections.sh
# [total] [stage]` (default 50000 connections, each logged in and subscribed to a channel of its
# own; stage `login` stops after the login). Starts a redis-server and three `switchboard serve
# --cluster` nodes (release build), then one load generator per node, all at once, each opening
# total/3 connections to its node: each process, server or generator, stays under the
# per-process open-file limit (20,000 here), which one process holding them all would pass. The
# generators connect from 127.0.0.1, 127.0.0.2 and 127.0.0.3, so no two share a source address
# (Linux keeps the whole 127.0.0.0/8 on the loopback). Prints each generator's JSON line, then
# one summary line: connections held, setup time, the nodes' resident memory before and after,
# and the memory each connection costs them. Needs redis-server.
set -euo pipefail
cd "$(dirname "$0")/.."
TOTAL="${1:-50000}"
STAGE="${2:-subscribe}"
BASE_PORT="${BENCH_PORT:-19700}"
REDIS_PORT=$((BASE_PORT + 99))
# shellcheck source=tools/bench-server.sh
source tools/bench-server.sh
bench_setup switchboard-cluster-connections
PIDS=()
BENCH_PIDS=()
REDIS_PID=""

stop_all() {
    for pid in "${BENCH_PIDS[@]}" "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    PIDS=()
    BENCH_PIDS=()
    if [[ -n "$REDIS_PID" ]]; then kill "$REDIS_PID" 2>/dev/null || true; wait "$REDIS_PID" 2>/dev/null || true; fi
    REDIS_PID=""
}
trap 'stop_all; rm -rf "$WORK"' EXIT

redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --maxclients 1000 \
    --dir "$WORK" >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
wait_for_port "$REDIS_PORT" "$WORK/redis.log"
for node in 1 2 3; do
    port=$((BASE_PORT + node))
    "$SERVER" serve --listen "127.0.0.1:$port" --admin-listen off --no-rate-limits --max-connections-per-address 0 --log-level warning \
        --data-dir "$WORK/data-$node" --cluster "redis://127.0.0.1:$REDIS_PORT" --node-id "n$node" >"$WORK/node-$node.log" 2>&1 &
    PIDS+=($!)
    wait_for_port "$port" "$WORK/node-$node.log"
done
per_node=$((TOTAL / 3))
echo "== $TOTAL connections ($per_node per node), stage $STAGE, commit $COMMIT, fd limit $FD_LIMIT" >&2
for node in 1 2 3; do
    "$BENCH" --url "ws://127.0.0.1:$((BASE_PORT + node))" --source-address "127.0.0.$node" --server-pid "${PIDS[$((node - 1))]}" \
        --scenario idle --idle-stage "$STAGE" --connections "$per_node" --label "node$node" >"$WORK/bench-$node.jsonl" 2>"$WORK/bench-$node.log" &
    BENCH_PIDS+=($!)
done
for pid in "${BENCH_PIDS[@]}"; do wait "$pid" || true; done
BENCH_PIDS=()
cat "$WORK"/bench-*.jsonl
python3 - "$WORK" "$TOTAL" "$STAGE" <<'PY'
import json, sys, glob
work, total, stage = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = [json.loads(line) for path in sorted(glob.glob(f"{work}/bench-*.jsonl")) for line in open(path) if line.strip()]
held = sum(line.get("connections", 0) for line in lines)
before = sum(line.get("server_rss_before_mb", 0) for line in lines)
after = sum(line.get("server_rss_mb", 0) for line in lines)
setup = max((line.get("setup_s", 0) for line in lines), default=0)
per = (after - before) * 1048576 / held if held else 0
print(json.dumps({"scenario": "cluster-connections", "stage": stage, "wanted": total, "connections": held,
                  "failed": sum(line.get("failed", 0) for line in lines), "setup_s": round(setup, 1),
                  "nodes_rss_before_mb": round(before, 1), "nodes_rss_mb": round(after, 1),
                  "nodes_rss_per_connection_bytes": round(per)}))
PY
