#!/usr/bin/env bash
# Fails when a module target imports another module target (modules talk through the bus only),
# or when a module, or a module's test target, imports more of ours than the design allows:
# a module imports SwitchboardCore and its C shims; its tests add the module and SwitchboardTestKit
# (and its store's contract, Package.swift's `moduleTestDependencies`).
set -euo pipefail
cd "$(dirname "$0")/.."
# The module targets: Package.swift's `moduleTargets`, the one list.
modules="$(sed -n '/^let moduleTargets = \[/,/^\]/p' Package.swift | grep -o '"Switchboard[A-Za-z]*"' | tr -d '"' | sed 's/^Switchboard//' | tr '\n' ' ')"
[ -n "$modules" ] || { echo "no moduleTargets list found in Package.swift" >&2; exit 1; }
import_of() { echo "^\s*(@testable\s+)?(@_exported\s+)?(public\s+|internal\s+|package\s+)?import\s+Switchboard$1\b"; }
status=0
for module in $modules; do
    for dir in "Sources/Switchboard$module" "Tests/Switchboard${module}Tests"; do
        [ -d "$dir" ] || continue
        for other in $modules; do
            [ "$other" = "$module" ] && continue
            if grep -rnE "$(import_of "$other")" "$dir"; then
                echo "$dir imports Switchboard$other: modules talk through the bus only" >&2
                status=1
            fi
        done
        if grep -rnE "$(import_of '(Server|Client|Wire|Transport|Testing)')" "$dir"; then
            echo "$dir imports a non-module target: a module (and its tests) use only SwitchboardCore, its C shims and SwitchboardTestKit" >&2
            status=1
        fi
    done
    if grep -rnE "$(import_of TestKit)" "Sources/Switchboard$module" 2>/dev/null; then
        echo "Switchboard$module imports SwitchboardTestKit: test support is for tests" >&2
        status=1
    fi
done
[ $status -eq 0 ] && echo "module imports: ok"
exit $status
