#!/usr/bin/env bash
# Switchboard next to reference brokers, in one run, in alternating rounds with the same traffic:
# - point-to-point: switchboard-bench --scenario point-to-point against Redis pub/sub
#   (tools/reference/redis_p2p.c: 50 pairs, 100-byte messages, 64 unanswered per sender), as fast
#   as each goes, then paced at P2P_RATE messages a second (100,000 by default) for the deliveries'
#   latency (p50, p99, p999) and the CPU per message at that rate, Switchboard driven both by
#   switchboard-bench and by a C client like redis_p2p (tools/reference/switchboard_p2p.c), unpaced
#   and paced;
# - fan-out: switchboard-bench --scenario fanout against Redis pub/sub and against nats-server
#   (tools/reference/redis_fanout.c and nats_fanout.c: one publisher, 100 subscribers of one
#   channel, 100-byte messages, 64 unanswered publishes), Switchboard a second time from the same
#   C program (tools/reference/switchboard_fanout.c).
# On a machine whose speed changes by the hour, the ratio of the costs is what stays comparable.
#
#   tools/bench-reference.sh [rounds] [kind]   # 5 rounds by default; kind: all (default), p2p or fanout
#   P2P_RATE=50000 tools/bench-reference.sh 5 p2p   # the paced point-to-point at another rate (0: none)
#   ROUNDS_KIND=fanout tools/bench-reference.sh 5   # the same as `tools/bench-reference.sh 5 fanout`
#   PIN=0 tools/bench-reference.sh             # server and load generator not pinned to a core each
#
# A round takes about 42 s of point-to-point (18 s with P2P_RATE=0) and 30 s of fan-out. Needs gcc and redis-server
# (Debian: apt-get install -y redis-server), and for the fan-out rounds nats-server
# (apt-get install -y nats-server). The servers listen on free loopback ports (BENCH_PORT,
# BENCH_REDIS_PORT, BENCH_NATS_PORT choose them) and are stopped by their PIDs. Prints how fast
# the machine is at the moment (tools/reference/hostcheck.c), one JSON line per run, then per kind
# the medians and the median of the rounds' ratios (Switchboard / reference, server CPU per
# delivery, over each run and over its fastest second).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS="${1:-5}"
KIND="${2:-${ROUNDS_KIND:-all}}"
PIN="${PIN:-1}"
case "$KIND" in
all) P2P=1 FANOUT=1 ;;
p2p) P2P=1 FANOUT=0 ;;
fanout) P2P=0 FANOUT=1 ;;
*) echo "bench-reference: kind is all, p2p or fanout, not '$KIND'" >&2; exit 2 ;;
esac
command -v redis-server >/dev/null || { echo "bench-reference: needs redis-server (apt-get install -y redis-server)" >&2; exit 2; }
command -v gcc >/dev/null || { echo "bench-reference: needs gcc" >&2; exit 2; }
if [[ "$FANOUT" == 1 ]]; then
    command -v nats-server >/dev/null || { echo "bench-reference: needs nats-server (apt-get install -y nats-server)" >&2; exit 2; }
fi

# shellcheck source=tools/bench-server.sh
source tools/bench-server.sh
PORT="${BENCH_PORT:-$(free_port)}"
REDIS_PORT="${BENCH_REDIS_PORT:-$(free_port)}"
NATS_PORT="${BENCH_NATS_PORT:-$(free_port)}"
bench_setup switchboard-reference
REFERENCE_PID=""
stop_reference() {
    if [[ -n "$REFERENCE_PID" ]]; then
        kill "$REFERENCE_PID" 2>/dev/null || true
        wait "$REFERENCE_PID" 2>/dev/null || true
        REFERENCE_PID=""
    fi
}
trap 'stop_server; stop_reference; rm -rf "$WORK"' EXIT
# Pinned: servers on core 0, load generators on core 1.
SERVER_CORE="" SERVER_PIN=() LOAD_PIN=()
if [[ "$PIN" == 1 ]]; then SERVER_CORE=0 SERVER_PIN=(taskset -c 0) LOAD_PIN=(taskset -c 1); fi
for generator in redis_p2p switchboard_p2p redis_fanout nats_fanout switchboard_fanout hostcheck; do
    gcc -O2 -Wall -Wextra -o "$WORK/$generator" "tools/reference/$generator.c"
done
# How fast the machine is now (tools/reference/hostcheck.c), on the server's core when pinned.
echo "host: $("${SERVER_PIN[@]}" "$WORK/hostcheck")"

REDIS_LABEL="redis $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/')"
NATS_LABEL=""
[[ "$FANOUT" == 1 ]] && NATS_LABEL="nats $(nats-server --version | sed 's/.*v//')"

# start_reference LOG PORT COMMAND...: COMMAND on the servers' core, as REFERENCE_PID, once it
# listens on PORT (and is what listens there: it must still run).
start_reference() {
    local log="$1" port="$2"
    shift 2
    "${SERVER_PIN[@]}" "$@" >"$log" 2>&1 &
    REFERENCE_PID=$!
    wait_for_port "$port" "$log"
    kill -0 "$REFERENCE_PID" 2>/dev/null || { echo "bench-reference: $1 stopped:" >&2; cat "$log" >&2; exit 1; }
}
start_redis() {
    start_reference "$WORK/redis.log" "$REDIS_PORT" \
        redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no
}

# The same traffic for every server of a kind.
FANOUT_TRAFFIC=(--subscribers 100 --payload 100 --window 64 --duration 5)
P2P_RATE="${P2P_RATE:-100000}"

for round in $(seq "$ROUNDS"); do
    if [[ "$P2P" == 1 ]]; then
        echo "== point-to-point round $round of $ROUNDS" >&2
        start_server "$SERVER" $SERVER_CORE
        "${LOAD_PIN[@]}" "$BENCH" --url "ws://127.0.0.1:$PORT" --server-pid "$SERVER_PID" --label switchboard \
            --scenario point-to-point --publishers 50 --payload 100 --rate 0 --duration 5 | tee -a "$RESULTS"
        stop_server
        # The same unpaced traffic from the C client (tools/reference/switchboard_p2p.c), the
        # program redis_p2p is: both servers driven by the same kind of generator.
        start_server "$SERVER" $SERVER_CORE
        "${LOAD_PIN[@]}" "$WORK/switchboard_p2p" --port "$PORT" --server-pid "$SERVER_PID" --label "c:switchboard" \
            --pairs 50 --payload 100 --window 64 --duration 5 | tee -a "$RESULTS"
        stop_server

        start_redis
        "${LOAD_PIN[@]}" "$WORK/redis_p2p" --port "$REDIS_PORT" --server-pid "$REFERENCE_PID" --label "$REDIS_LABEL" \
            --pairs 50 --payload 100 --window 64 --duration 5 | tee -a "$RESULTS"
        stop_reference
        if [[ "$P2P_RATE" != 0 ]]; then
            # switchboard-bench with one event loop, as redis_p2p is one thread: on its one core, a
            # second loop made every delivery wait for the scheduler (p50 0.40 ms with two loops,
            # 0.16 ms with one, at 50,000 messages/s on 2026-12-03), which is the generator's cost.
            echo "== point-to-point at $P2P_RATE messages/s, round $round of $ROUNDS" >&2
            start_server "$SERVER" $SERVER_CORE
            "${LOAD_PIN[@]}" "$BENCH" --url "ws://127.0.0.1:$PORT" --server-pid "$SERVER_PID" --label switchboard \
                --scenario point-to-point --publishers 50 --payload 100 --window 64 --rate "$P2P_RATE" --duration 5 --threads 1 \
                | tee -a "$RESULTS"
            stop_server
            # The same paced traffic from a C client (tools/reference/switchboard_p2p.c), built as
            # redis_p2p is: its latencies are the server's without switchboard-bench's own part.
            start_server "$SERVER" $SERVER_CORE
            "${LOAD_PIN[@]}" "$WORK/switchboard_p2p" --port "$PORT" --server-pid "$SERVER_PID" --label "c:switchboard" \
                --pairs 50 --payload 100 --window 64 --rate "$P2P_RATE" --duration 5 | tee -a "$RESULTS"
            stop_server

            start_redis
            "${LOAD_PIN[@]}" "$WORK/redis_p2p" --port "$REDIS_PORT" --server-pid "$REFERENCE_PID" --label "$REDIS_LABEL" \
                --pairs 50 --payload 100 --window 64 --rate "$P2P_RATE" --duration 5 | tee -a "$RESULTS"
            stop_reference
        fi
    fi
    if [[ "$FANOUT" == 1 ]]; then
        echo "== fan-out round $round of $ROUNDS" >&2
        start_server "$SERVER" $SERVER_CORE
        "${LOAD_PIN[@]}" "$BENCH" --url "ws://127.0.0.1:$PORT" --server-pid "$SERVER_PID" --label switchboard \
            --scenario fanout --publishers 1 --rate 0 "${FANOUT_TRAFFIC[@]}" | tee -a "$RESULTS"
        stop_server
        # The same traffic from the C client (tools/reference/switchboard_fanout.c), the program
        # that drives Redis and NATS.
        start_server "$SERVER" $SERVER_CORE
        "${LOAD_PIN[@]}" "$WORK/switchboard_fanout" --port "$PORT" --server-pid "$SERVER_PID" --label "c:switchboard" \
            "${FANOUT_TRAFFIC[@]}" | tee -a "$RESULTS"
        stop_server

        start_redis
        "${LOAD_PIN[@]}" "$WORK/redis_fanout" --port "$REDIS_PORT" --server-pid "$REFERENCE_PID" --label "$REDIS_LABEL" \
            "${FANOUT_TRAFFIC[@]}" | tee -a "$RESULTS"
        stop_reference

        start_reference "$WORK/nats.log" "$NATS_PORT" nats-server --addr 127.0.0.1 --port "$NATS_PORT"
        "${LOAD_PIN[@]}" "$WORK/nats_fanout" --port "$NATS_PORT" --server-pid "$REFERENCE_PID" --label "$NATS_LABEL" \
            "${FANOUT_TRAFFIC[@]}" | tee -a "$RESULTS"
        stop_reference
    fi
done

python3 - "$RESULTS" "$COMMIT" "$PIN" "$P2P" "$FANOUT" <<'EOF'
import json, statistics, sys
lines = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
pinned = 'pinned (server core 0, load core 1)' if sys.argv[3] == '1' else 'not pinned'
def runs(scenario, prefix, key):
    return [l[key] for l in lines if l["scenario"] == scenario and l["label"].startswith(prefix) and l.get(key)]
def rounds(values): return ', '.join(f'{r:.2f}' for r in values)
if sys.argv[4] == "1":
    def p2p(prefix, key, paced=False):
        return [l[key] for l in lines if l["scenario"] == "point-to-point" and l["label"].startswith(prefix) and l.get(key)
                and (l.get("rate_target", 0) > 0) == paced]
    print(f"commit {sys.argv[2]}, {pinned}, {len(p2p('switchboard', 'publishes_per_s'))} rounds; medians of the rounds")
    for client, prefix in (("switchboard-bench", "switchboard"), ("the C client, as Redis is", "c:switchboard")):
        if not p2p(prefix, "publishes_per_s"): continue
        print(f"switchboard driven by {client}:")
        for key, what in (("server_cpu_ns_per_delivery", "the run"), ("server_cpu_ns_per_delivery_fastest_second", "its fastest second")):
            ours, redis = p2p(prefix, key), p2p("redis", key)
            ratios = [a / b for a, b in zip(ours, redis)]
            print(f"  server CPU per message over {what}: switchboard {statistics.median(ours):,.0f} ns, redis {statistics.median(redis):,.0f} ns, "
                  f"ratio {statistics.median(ratios):.2f} (rounds: {rounds(ratios)})")
        print(f"  messages/s: switchboard {statistics.median(p2p(prefix, 'publishes_per_s')):,.0f}, "
              f"redis {statistics.median(p2p('redis', 'publishes_per_s')):,.0f}")
    if p2p("switchboard", "publishes_per_s", paced=True):
        rate = [l for l in lines if l.get("rate_target", 0) > 0][0]["rate_target"]
        print(f"paced at {rate:,} messages/s, medians of the rounds (deliveries/s: switchboard "
              f"{statistics.median(p2p('switchboard', 'deliveries_per_s', True)):,.0f}, redis "
              f"{statistics.median(p2p('redis', 'deliveries_per_s', True)):,.0f}; behind schedule: switchboard "
              f"{sum(l.get('behind_schedule', 0) for l in lines if l.get('rate_target', 0) > 0 and l['label'].startswith('switchboard'))}, redis "
              f"{sum(l.get('behind_schedule', 0) for l in lines if l.get('rate_target', 0) > 0 and l['label'].startswith('redis'))})")
        for client, prefix in (("switchboard-bench", "switchboard"), ("the C client", "c:switchboard")):
            if not p2p(prefix, "latency_p50_ms", True): continue
            print(f" switchboard driven by {client}:")
            for key in ("latency_p50_ms", "latency_p99_ms", "latency_p999_ms", "server_cpu_ns_per_delivery"):
                ours, redis = p2p(prefix, key, True), p2p("redis", key, True)
                ratios = [a / b for a, b in zip(ours, redis)]
                unit = "ns" if key.endswith("delivery") else "ms"
                print(f"  {key}: switchboard {statistics.median(ours):,.3f} {unit}, redis {statistics.median(redis):,.3f} {unit}, "
                      f"ratio {statistics.median(ratios):.2f} (rounds: {rounds(ratios)})")
if sys.argv[5] == "1":
    # A round is a switchboard line and the reference lines after it.
    fanout_rounds = []
    for l in lines:
        if l["scenario"] != "fanout": continue
        if l["label"].startswith("switchboard"): fanout_rounds.append({})
        if fanout_rounds: fanout_rounds[-1][l["label"].split()[0]] = l
    def medians(server, key): return statistics.median(r[server][key] for r in fanout_rounds if r.get(server, {}).get(key))
    print(f"fan-out (1 publisher, 100 subscribers, 100 B, 64 unanswered): commit {sys.argv[2]}, {pinned}, "
          f"{len(fanout_rounds)} rounds; medians of the rounds")
    for client, ours_key in (("switchboard-bench", "switchboard"), ("the C client, as Redis and NATS are", "c:switchboard")):
        if not any(r.get(ours_key) for r in fanout_rounds): continue
        print(f"switchboard driven by {client}:")
        for key, what in (("server_cpu_ns_per_delivery", "the run"), ("server_cpu_ns_per_delivery_fastest_second", "its fastest second")):
            complete = [r for r in fanout_rounds if all(r.get(s, {}).get(key) for s in (ours_key, "redis", "nats"))]
            ours = [r[ours_key][key] for r in complete]
            by_redis = [a / r["redis"][key] for a, r in zip(ours, complete)]
            by_nats = [a / r["nats"][key] for a, r in zip(ours, complete)]
            by_better = [a / min(r["redis"][key], r["nats"][key]) for a, r in zip(ours, complete)]
            print(f"  server CPU per delivery over {what}: switchboard {medians(ours_key, key):,.0f} ns, "
                  f"redis {medians('redis', key):,.0f} ns, nats {medians('nats', key):,.0f} ns")
            print(f"    switchboard / redis {statistics.median(by_redis):.2f} (rounds: {rounds(by_redis)})")
            print(f"    switchboard / nats {statistics.median(by_nats):.2f} (rounds: {rounds(by_nats)})")
            print(f"    switchboard / the better of the two {statistics.median(by_better):.2f} (rounds: {rounds(by_better)})")
    print(f"deliveries/s: switchboard {medians('switchboard', 'deliveries_per_s'):,.0f} "
          f"({medians('c:switchboard', 'deliveries_per_s') if any(r.get('c:switchboard') for r in fanout_rounds) else 0:,.0f} from the C client), "
          f"redis {medians('redis', 'deliveries_per_s'):,.0f}, nats {medians('nats', 'deliveries_per_s'):,.0f}")
    runs_of_round = [l for r in fanout_rounds for l in r.values()]
    loads = [l["loadavg_1m"] for l in runs_of_round]
    print(f"load average (1 min) during the fan-out runs: {min(loads):.1f} – {max(loads):.1f}; "
          f"lost: {sum(l.get('lost', 0) for l in runs_of_round)}; "
          f"load generator saturated or held back: {sum(1 for l in runs_of_round if l.get('bench_cpu_saturated') or l.get('lag_waits'))} runs")
EOF
