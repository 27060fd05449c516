#!/usr/bin/env bash
# The SDK's build for Apple platforms, proven on Linux: on Apple platforms Core and Wire use
# stand-ins for what is newer than the SDK's floor (`PthreadMutex` / `LockedAtomic` for
# Synchronization's `Mutex` / `Atomic`, an array for `InlineArray`, `UTF8Text` for `UTF8Span` and
# `String(validating:)`, `NanosecondDuration` and the monotonic clock for `Duration` and
# `ContinuousClock`; README, "Platforms"). SWITCHBOARD_PORTABLE and SWITCHBOARD_PORTABLE_TIME pick
# them here too; this builds SwitchboardClient with both, then runs the Core, Wire and SDK tests
# with the first. It uses scratch paths of its own, so the normal build stays as it is.
# Between the two, tools/check-sdk-typed-throws.py looks for what an Apple compiler alone would
# refuse. --build-only stops there (what CI runs: the Apple code compiles and passes that check;
# the stand-ins' own tests run in the normal suite).
#   tools/check-sdk-portable-build.sh [--build-only | swift test arguments …, e.g. --filter LinkMachine]
set -euo pipefail
cd "$(dirname "$0")/.."

# The Apple build: every stand-in, Core's `NanosecondDuration` and monotonic clock included.
apple=(--scratch-path .build/portable -Xswiftc -DSWITCHBOARD_PORTABLE -Xswiftc -DSWITCHBOARD_PORTABLE_TIME)
# The tested build: the SDK's tests start a real server in the test process, whose modules mix
# Core's time with the standard library's, so it keeps Swift's Duration (the stand-in has tests of
# its own, PortableDurationTests, against Duration).
portable=(--scratch-path .build/portable-tested -Xswiftc -DSWITCHBOARD_PORTABLE)
filter=(--filter '^(SwitchboardCoreTests|SwitchboardWireTests|SwitchboardClientTests)\.')
[ $# -eq 0 ] || filter=("$@")

started=$SECONDS
swift build "${apple[@]}" --target SwitchboardClient
# What only an Apple compiler refuses: a typed-throws function type whose metadata is needed.
python3 tools/check-sdk-typed-throws.py .build/portable
if [ "${1:-}" = "--build-only" ]; then
    echo "check-sdk-portable-build: SwitchboardClient built and checked in $((SECONDS - started)) s"
    exit 0
fi
# The SDK's tests start a real server, so this builds the server as well (its modules keep their
# own Synchronization types; only Core changes).
swift build "${portable[@]}" --build-tests
built=$SECONDS
tools/test.sh --skip-build "${portable[@]}" "${filter[@]}"
echo "check-sdk-portable-build: built in $((built - started)) s, tested in $((SECONDS - built)) s"
