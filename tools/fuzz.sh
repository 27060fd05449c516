#!/usr/bin/env bash
# Builds the libFuzzer targets in tools/fuzz/ and runs each for a bounded time.
#   tools/fuzz.sh [seconds-per-target] [target ...]
# Targets: websocket (WebSocketParser), http (HTTPHeadReader + both handshakes), httprequest
# (HTTPRequestParser, the admin listener's), msgpack (MessagePackReader, ClientFrame/ServerFrame
# decoding), tokens (006/007 parsers, verifier), resp (the Redis protocol reader, read whole and in
# chunks), json (the server API's JSON reader), httpresponse (the webhooks' HTTP client's response
# heads, read whole and in chunks), relay (the cluster link's decoders of what nodes publish to each
# other: relay envelopes, claim, moved-session and user-command announcements, answers, node status).
# Each binary is the harness compiled with the library sources it exercises, under
# -sanitize=fuzzer,address. Seeds come from tools/fuzz/corpus/<target>/ (read only); what the fuzzer
# learns goes to .build/fuzz/corpus/<target>/, crashes to .build/fuzz/crashes/. A crash fails the
# run: turn its input into a regression test, then fix it. Not part of `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(websocket http httprequest httpresponse msgpack tokens resp json relay)

out=.build/fuzz
# Short allocation stacks: with full ones ASan's stack store grows with every new call path and a
# long run of the recursive MessagePack decoder reaches the RSS limit without any leak.
export ASAN_OPTIONS="${ASAN_OPTIONS:-malloc_context_size=4}"
mkdir -p "$out/modules" "$out/crashes"
flags=(-sanitize=fuzzer,address -parse-as-library -swift-version 6 -O -g)

sources() { find "$@" -name '*.swift' | sort; }

# Compiles the library target NAME (Sources/NAME) into $out/NAME.o and its module, once its sources
# change, after the targets it imports: module_object NAME [extra swiftc flags…]
module_object() {
    local name="$1"
    shift
    [ -f "$out/$name.o" ] && [ -z "$(find "Sources/$name" -newer "$out/$name.o" -name '*.swift')" ] && return
    echo "building $name" >&2
    swiftc "${flags[@]}" -module-name "$name" -wmo -c -emit-module -I "$out/modules" "$@" \
        -emit-module-path "$out/modules/$name.swiftmodule" -o "$out/$name.o" $(sources "Sources/$name")
}

build_core() {
    module_object SwitchboardReference
    module_object SwitchboardCore
}

build_cryptography() {
    module_object SwitchboardReference
    module_object SwitchboardCryptography -I Sources/COpenSSL
}

core_objects() { echo "$out/SwitchboardCore.o $out/SwitchboardReference.o"; }

# The transport's handshake code names TLS errors and takes its SHA-1 from the cryptography library,
# so its targets link that library too.
transport_inputs=(-I "$out/modules" -I Sources/COpenSSL)
transport_objects() { echo "$out/SwitchboardCryptography.o $out/SwitchboardReference.o -lssl -lcrypto"; }

build() {
    local target="$1"
    echo "building fuzz-$target" >&2
    case "$target" in
    websocket | http | httprequest | httpresponse)
        local harness
        case "$target" in
        websocket) harness=WebSocketParser ;;
        http) harness=HTTPHandshake ;;
        httprequest) harness=HTTPRequest ;;
        httpresponse) harness=HTTPResponse ;;
        esac
        build_cryptography
        swiftc "${flags[@]}" -module-name "Fuzz$harness" "${transport_inputs[@]}" -o "$out/fuzz-$target" \
            "tools/fuzz/${harness}Fuzz.swift" \
            $(sources Sources/SwitchboardTransport/Codec Sources/SwitchboardTransport/Handshake Sources/SwitchboardTransport/HTTP/Parsing) \
            Sources/SwitchboardTransport/HTTP/Client/HTTPResponseHead.swift $(transport_objects) ;;
    msgpack)
        build_core
        swiftc "${flags[@]}" -module-name FuzzMessagePack -I "$out/modules" -o "$out/fuzz-$target" \
            tools/fuzz/MessagePackFuzz.swift $(sources Sources/SwitchboardWire) $(core_objects) ;;
    tokens)
        build_core
        build_cryptography
        swiftc "${flags[@]}" -module-name FuzzTokens -I "$out/modules" -I Sources/COpenSSL -I Sources/CZlib \
            -o "$out/fuzz-$target" tools/fuzz/TokenFuzz.swift $(sources Sources/SwitchboardCrypto) \
            $(core_objects) "$out/SwitchboardCryptography.o" -lssl -lcrypto -lz ;;
    resp)
        swiftc "${flags[@]}" -module-name FuzzRESP -o "$out/fuzz-$target" \
            tools/fuzz/RESPFuzz.swift $(sources Sources/SwitchboardRedis/Codec) ;;
    relay)
        # The decoders are the cluster link's own (internal) types: their files are compiled into the harness.
        build_core
        module_object SwitchboardWire
        swiftc "${flags[@]}" -module-name FuzzRelay -I "$out/modules" -o "$out/fuzz-$target" tools/fuzz/RelayFuzz.swift \
            Sources/SwitchboardCluster/{RelayEnvelope,DeliveryFields,UserClaims,UserCommands,MovedSessionAnnouncement,NodeStatusRecord}.swift \
            "$out/SwitchboardWire.o" $(core_objects) ;;
    json)
        # JSONText quotes with Core's JSONQuoting.
        build_core
        swiftc "${flags[@]}" -module-name FuzzJSON -I "$out/modules" -o "$out/fuzz-$target" \
            tools/fuzz/JSONFuzz.swift $(sources Sources/SwitchboardServer/Admin/API/JSON) Sources/SwitchboardServer/Admin/JSONText.swift \
            $(core_objects) ;;
    *) echo "unknown target $target" >&2; return 2 ;;
    esac
}

failed=()
for target in "${targets[@]}"; do
    # The linker warns about every sanitizer symbol; keep the log, show it on failure only.
    build "$target" >"$out/$target-build.log" 2>&1 || { cat "$out/$target-build.log" >&2; exit 1; }
    mkdir -p "$out/corpus/$target"
    echo "fuzzing $target for ${seconds}s"
    if ! "$out/fuzz-$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
        -print_final_stats=1 -artifact_prefix="$out/crashes/$target-" \
        "$out/corpus/$target" "tools/fuzz/corpus/$target" 2>"$out/$target.log"; then
        failed+=("$target")
        grep -E "ERROR|Fatal error|SUMMARY|Test unit written" "$out/$target.log" >&2 || tail -20 "$out/$target.log" >&2
    fi
    grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$out/$target.log" | tr '\n' ' '
    echo
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "crashes in: ${failed[*]} (inputs in $out/crashes/)" >&2
    exit 1
fi
echo "no crashes"
