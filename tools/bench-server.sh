# Sourced by the benchmark scripts: start and stop one server under load tests, by its PID, and
# run the load generator against it.
# Needs PORT and WORK set; `start_server BINARY` starts BINARY with --no-rate-limits on
# 127.0.0.1:$PORT and waits for it to listen; `stop_server` kills it. The caller's EXIT trap
# should call stop_server.
SERVER_PID=""

# bench_setup PREFIX: a work directory /tmp/PREFIX.XXXXXX (WORK, RESULTS), removed with the
# server stopped on exit; the open-file limit as high as allowed (FD_LIMIT: the connection-count
# scenarios need one descriptor per connection in the server and one in the load generator; root
# may raise the hard limit, otherwise it is taken as it is); a release build and its binaries
# (SERVER, BENCH) and commit (COMMIT). BENCH_SERVER names another server binary to measure (an
# earlier build, for a before-and-after next to the same reference); COMMIT then says so.
bench_setup() {
    WORK="$(mktemp -d "/tmp/$1.XXXXXX")"
    RESULTS="$WORK/results.jsonl"
    trap 'stop_server; rm -rf "$WORK"' EXIT
    trap 'exit 130' INT TERM
    ulimit -n 200000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
    FD_LIMIT="$(ulimit -n)"
    swift build -c release >&2
    # The commit the binaries were built from (sources may change while the scenarios run).
    COMMIT="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift || echo ' (with uncommitted changes)')"
    SERVER=.build/release/switchboard
    if [[ -n "${BENCH_SERVER:-}" ]]; then
        SERVER="$BENCH_SERVER"
        COMMIT="server $BENCH_SERVER"
    fi
    BENCH=.build/release/switchboard-bench
}

stop_server() {
    if [[ -n "$SERVER_PID" ]]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=""
    fi
}

# start_server BINARY [CORE]: BINARY serving on 127.0.0.1:$PORT, pinned to CORE when given, with
# the extra options in SERVER_FLAGS (split on spaces) when set.
start_server() {
    rm -rf "$WORK/data"
    local pin=()
    [[ -n "${2:-}" ]] && pin=(taskset -c "$2")
    local extra=()
    [[ -n "${SERVER_FLAGS:-}" ]] && read -r -a extra <<<"$SERVER_FLAGS"
    "${pin[@]}" "$1" serve --listen "127.0.0.1:$PORT" --no-rate-limits --log-level warning --data-dir "$WORK/data" \
        "${extra[@]}" >"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    wait_for_port "$PORT" "$WORK/server.log"
}

# wait_for_port PORT LOG: returns once 127.0.0.1:PORT takes connections; after 5 s, prints LOG
# and exits.
wait_for_port() {
    for _ in $(seq 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.05
    done
    echo "nothing listens on port $1:" >&2
    cat "$2" >&2
    exit 1
}

# free_port: a loopback port nothing listens on now.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# bench NAME RUNS ARGS...: a fresh $SERVER, RUNS runs of $BENCH with ARGS, one JSON line each
# appended to $RESULTS; the command is noted in $WORK/commands.tsv.
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

# write_machine: the machine, the commit ($COMMIT), the open-file limit ($FD_LIMIT) and the runs
# per scenario ($RUNS), in $WORK/machine.tsv.
write_machine() {
    {
        echo "uname	$(uname -a)"
        echo "nproc	$(nproc)"
        echo "cpu	$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
        echo "memory	$(free -m | awk '/Mem:/ {print $2 " MB"}')"
        echo "disk	$(df -T "$WORK" | awk 'NR == 2 {print $2 " on " $1}')"
        echo "commit	$COMMIT"
        echo "date	$(date -u '+%Y-%m-%d %H:%M UTC')"
        echo "swift	$(swift --version 2>/dev/null | head -1)"
        echo "fd_limit	$FD_LIMIT"
        echo "runs	$RUNS"
    } >"$WORK/machine.tsv"
}
