#!/usr/bin/env bash
# Fails when a module target imports another module target: modules talk through the bus only.
set -euo pipefail
cd "$(dirname "$0")/.."
modules="Session MessageRouter TopicRouter Presence Storage Lock Crypto"
status=0
for module in $modules; do
    dir="Sources/Switchboard$module"
    [ -d "$dir" ] || continue
    for other in $modules; do
        [ "$other" = "$module" ] && continue
        if grep -rnE "^\s*(@testable\s+)?(@_exported\s+)?(public\s+|internal\s+|package\s+)?import\s+Switchboard$other\b" "$dir"; then
            echo "Switchboard$module imports Switchboard$other: modules talk through the bus only" >&2
            status=1
        fi
    done
    if grep -rnE "^\s*import\s+Switchboard(Server|Client|Wire|Transport|Testing)\b" "$dir"; then
        echo "Switchboard$module imports a non-module target: a module imports only SwitchboardCore and its C shims" >&2
        status=1
    fi
done
[ $status -eq 0 ] && echo "module imports: ok"
exit $status
