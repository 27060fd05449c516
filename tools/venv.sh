#!/usr/bin/env bash
# Makes .venv/ (python3 -m venv) if it is not there and installs the pinned packages of each
# requirements file given into it, again whenever that file changes.
#   tools/venv.sh tools/requirements.txt [tools/soak-requirements.txt …]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv"

if [ ! -x "$venv/bin/python3" ] || ! "$venv/bin/python3" -m pip --version >/dev/null 2>&1; then
    rm -rf "$venv"
    python3 -m venv "$venv" || {
        echo "tools/venv.sh: python3 -m venv failed; on Debian install python3-venv first" >&2
        exit 1
    }
fi
for requirements in "$@"; do
    installed="$venv/installed-$(basename "$requirements")"
    if ! cmp -s "$requirements" "$installed"; then
        "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check -r "$requirements"
        cp "$requirements" "$installed"
    fi
done
