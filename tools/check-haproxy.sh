#!/usr/bin/env bash
# Checks docs/examples/haproxy.cfg: three `switchboard serve --cluster` nodes on one redis-server,
# as docs/CLUSTER.md starts them (client ports 9100/9200/9300, admin ports 9101/9201/9301), behind
# HAProxy on port 9000. The Python cluster peer (written from PROTOCOL.md alone) runs its checks
# with every client connecting through HAProxy; then node n1 stops, and once HAProxy's readiness
# check has taken it out, the checks run again on the two nodes left. Not part of `swift test`:
# needs Debian's haproxy and redis-server. `tools/check-haproxy.sh`
set -euo pipefail
cd "$(dirname "$0")/.."
for port in 6390 9000 9100 9101 9200 9201 9300 9301; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "port $port is taken" >&2; exit 2; fi
done
swift build --product switchboard >&2
BIN="$(swift build --show-bin-path)/switchboard"
PYTHON=".venv/bin/python3"
[[ -x "$PYTHON" ]] || PYTHON=python3
WORK="$(mktemp -d)"
PIDS=()
stop_all() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap stop_all EXIT

redis-server --port 6390 --bind 127.0.0.1 --save "" --appendonly no --dir "$WORK" > "$WORK/redis.log" 2>&1 &
PIDS+=($!)
for node in 1 2 3; do
    mkdir -p "$WORK/n$node"
    "$BIN" serve --listen "127.0.0.1:9${node}00" --admin-listen "127.0.0.1:9${node}01" --data-dir "$WORK/n$node" \
        --cluster redis://127.0.0.1:6390 --node-id "n$node" --no-rate-limits --log-level warning > "$WORK/n$node.log" 2>&1 &
    PIDS+=($!)
done
N1="${PIDS[1]}"

ready() { "$PYTHON" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$1/health/ready', timeout=2)" 2>/dev/null; }
wait_for() {  # wait_for DESCRIPTION COMMAND...: up to 60 s
    local description="$1"; shift
    for _ in $(seq 1 300); do "$@" && return 0; sleep 0.2; done
    echo "timed out waiting for $description" >&2; tail -n 5 "$WORK"/*.log >&2; exit 1
}
for node in 1 2 3; do wait_for "node n$node to be ready" ready "9${node}01"; done

haproxy -f docs/examples/haproxy.cfg -db > "$WORK/haproxy.log" 2>&1 &
PIDS+=($!)
up() { (exec 3<>/dev/tcp/127.0.0.1/9000) 2>/dev/null; }
wait_for "HAProxy to listen" up

through_haproxy() {
    "$PYTHON" tools/peer_cluster.py --url ws://127.0.0.1:9000 --url ws://127.0.0.1:9000 --url ws://127.0.0.1:9000
}
echo "== three nodes behind HAProxy"
through_haproxy
echo "== n1 stopped"
kill "$N1"
wait "$N1" 2>/dev/null || true
down() { grep -q "nodes/n1 is DOWN" "$WORK/haproxy.log"; }
wait_for "HAProxy to take n1 out" down
through_haproxy
echo "HAProxy example: ok"
