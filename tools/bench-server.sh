# Sourced by the benchmark scripts: start and stop one server under load tests, by its PID.
# Needs PORT and WORK set; `start_server BINARY` starts BINARY with --no-rate-limits on
# 127.0.0.1:$PORT and waits for it to listen; `stop_server` kills it. The caller's EXIT trap
# should call stop_server.
SERVER_PID=""

stop_server() {
    if [[ -n "$SERVER_PID" ]]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=""
    fi
}

start_server() {
    rm -rf "$WORK/data"
    "$1" serve --listen "127.0.0.1:$PORT" --no-rate-limits --log-level warning --data-dir "$WORK/data" \
        >"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then return 0; fi
        sleep 0.05
    done
    echo "server $1 did not start:" >&2
    cat "$WORK/server.log" >&2
    exit 1
}
