#!/usr/bin/env bash
# Faults under load for cluster mode (tools/chaos.py says which, and what is checked):
#   tools/chaos.sh [minutes] [seed]
# Builds switchboard (release), then runs three nodes and redis-server on free loopback ports,
# kills and pauses them at random under a load of Python peers, and checks every client's record.
# Not part of `swift test`: it runs for minutes. Needs redis-server and PyPI's websockets and
# msgpack (tools/requirements.txt; tools/test.sh installs them in .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
minutes="${1:-3}"
seed="${2:-$(date +%s)}"
swift build -c release --product switchboard >&2
PYTHON=".venv/bin/python3"
[[ -x "$PYTHON" ]] || PYTHON=python3
exec "$PYTHON" tools/chaos.py --switchboard "$(swift build -c release --show-bin-path)/switchboard" --minutes "$minutes" --seed "$seed"
