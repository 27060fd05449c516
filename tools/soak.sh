#!/usr/bin/env bash
# Sustained mixed load on one server, checked for drift (tools/soak.py says what it does and checks):
#   tools/soak.sh [minutes] [seed]          (default 30 minutes; a seed from the clock)
# Builds switchboard in release mode (before the timed minutes), installs the pinned Python packages
# of tools/requirements.txt and tools/soak-requirements.txt (the plot) into .venv/, then runs
# tools/soak.py, which starts one `switchboard serve --no-rate-limits` on free loopback ports and
# stops it by its PID. Writes soak.json, samples.csv and soak.png to $SOAK_OUT (default .build/soak).
# Exits non-zero when a check failed (1) or the soak could not run (2). Not part of `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes="${1:-30}"
seed="${2:-$(date +%s)}"
out="${SOAK_OUT:-.build/soak}"
swift build -c release --product switchboard >&2
tools/venv.sh tools/requirements.txt tools/soak-requirements.txt
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
git diff --quiet HEAD 2>/dev/null || commit="$commit+changes"
exec .venv/bin/python3 tools/soak.py --switchboard "$(swift build -c release --show-bin-path)/switchboard" \
    --minutes "$minutes" --seed "$seed" --out "$out" --commit "$commit"
