#!/usr/bin/env bash
# Cluster mode against one node, alternating in one session so both see the same machine load:
# `tools/bench-cluster.sh [rounds]`. Each round runs every scenario against one node on its own,
# then against three `switchboard serve --cluster` nodes on one redis-server (the load generator
# spreads the clients over the nodes: every point-to-point pair and every fan-out publisher talks
# across nodes). Prints one JSON line per run, labelled `<scenario>@1-node` or `<scenario>@3-nodes`;
# `server_cpu_ns_per_delivery` counts the CPU of every node (not of Redis, reported apart as
# `redis_cpu_seconds`). SCENARIOS="point-to-point" limits the runs. Needs redis-server.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-3}"
BASE_PORT="${BENCH_PORT:-19600}"
REDIS_PORT=$((BASE_PORT + 99))
# shellcheck source=tools/bench-server.sh
source tools/bench-server.sh
bench_setup switchboard-cluster-bench
PIDS=()
REDIS_PID=""

stop_all() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    PIDS=()
    if [[ -n "$REDIS_PID" ]]; then kill "$REDIS_PID" 2>/dev/null || true; wait "$REDIS_PID" 2>/dev/null || true; fi
    REDIS_PID=""
}
trap 'stop_all; rm -rf "$WORK"' EXIT

arguments() {
    case "$1" in
    fanout-max) echo "--scenario fanout --subscribers 99 --payload 100 --rate 0 --duration 5" ;;
    point-to-point) echo "--scenario point-to-point --publishers 48 --payload 100 --rate 0 --duration 5" ;;
    *) echo "unknown scenario $1" >&2; exit 2 ;;
    esac
}

# start_nodes COUNT: COUNT nodes (with a redis-server when COUNT > 1); sets PIDS and URLS.
start_nodes() {
    local count="$1" cluster=()
    URLS=()
    if ((count > 1)); then
        redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
            --dir "$WORK" >"$WORK/redis.log" 2>&1 &
        REDIS_PID=$!
        wait_for_port "$REDIS_PORT" "$WORK/redis.log"
        cluster=(--cluster "redis://127.0.0.1:$REDIS_PORT")
    fi
    for node in $(seq "$count"); do
        local port=$((BASE_PORT + node))
        rm -rf "$WORK/data-$node"
        "$SERVER" serve --listen "127.0.0.1:$port" --admin-listen off --no-rate-limits --log-level warning \
            --data-dir "$WORK/data-$node" "${cluster[@]}" >"$WORK/node-$node.log" 2>&1 &
        PIDS+=($!)
        wait_for_port "$port" "$WORK/node-$node.log"
        URLS+=(--url "ws://127.0.0.1:$port")
    done
}

redis_cpu() {
    [[ -n "$REDIS_PID" ]] || { echo 0; return; }
    awk '{print ($14 + $15) / 100}' "/proc/$REDIS_PID/stat"
}

run() {
    local nodes="$1" name="$2" pid_args=()
    start_nodes "$nodes"
    for pid in "${PIDS[@]}"; do pid_args+=(--server-pid "$pid"); done
    local before after
    before="$(redis_cpu)"
    # shellcheck disable=SC2046
    line="$("$BENCH" "${URLS[@]}" "${pid_args[@]}" --label "$name@$nodes-node$([[ $nodes -gt 1 ]] && echo s)" $(arguments "$name"))"
    after="$(redis_cpu)"
    echo "${line%\}},\"redis_cpu_seconds\":$(awk -v a="$after" -v b="$before" 'BEGIN {printf "%.2f", a - b}')}"
    stop_all
}

for round in $(seq "$ROUNDS"); do
    echo "== round $round of $ROUNDS" >&2
    for nodes in 1 3; do
        for name in ${SCENARIOS:-fanout-max point-to-point}; do run "$nodes" "$name"; done
    done
done
