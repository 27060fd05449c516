#!/usr/bin/env bash
# The test command: runs `swift test` (arguments passed on, e.g. --filter) with the Python
# packages the cross-language tests need. They are pinned in tools/requirements.txt and
# installed into .venv/ on first use (again whenever the file changes); that venv's python3
# comes first on PATH and in SWITCHBOARD_PYTHON, which the tests use to run tools/*.py.
# Every suite has a time limit (tools/check-time-limits.py), which names a hung test; a test
# stuck where cancellation does not reach would still hold the run, so the whole run is stopped
# after SWITCHBOARD_TEST_TIMEOUT (default 20m; the suite takes about a minute). The build comes
# first, outside that limit.
#   tools/test.sh [swift test arguments …]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv"
"$root/tools/venv.sh" "$root/tools/requirements.txt"

export PATH="$venv/bin:$PATH"
export SWITCHBOARD_PYTHON="$venv/bin/python3"
cd "$root"
# Build first, outside the time limit (a fresh clone's build takes minutes on a small machine), then
# run the tests under it, so a hung test ends the run instead of stalling it.
skip_build=false
for argument in "$@"; do [ "$argument" = "--skip-build" ] && skip_build=true; done
if ! $skip_build; then
    swift build --build-tests
    set -- --skip-build "$@"
fi
# Swift Testing runs every test at once unless told otherwise; hundreds of in-process servers,
# each with its event-loop threads, then share two cores with whatever else runs, the executor's
# threads get a sliver of them and real-time waits run out (measured beside two busy loops: 560 s
# and 310 failed expectations unbounded, 74 s and none at 8). Four tests per core at a time.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-$(( $(nproc) * 4 ))}"
exec timeout --kill-after=30s "${SWITCHBOARD_TEST_TIMEOUT:-20m}" swift test "$@"
