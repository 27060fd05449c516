#!/usr/bin/env bash
# The SDK builds for iOS and macOS as well as Linux: fails when Swift code in the SDK's folders
# (Sources/SwitchboardClient, SwitchboardWire and SwitchboardReference, or the folders given) uses a Linux-only symbol outside a
# `#if os(Linux)` or `#if canImport(Glibc)` block: Glibc, epoll, eventfd, the CLinux or COpenSSL
# shims, or an import of SwitchboardTransport / SwitchboardCryptography (epoll and OpenSSL);
# and Synchronization, whose Mutex and Atomic need macOS 15 / iOS 18, above the SDK's floor
# (the SDK's Locked serves instead).
# Comments do not count. Before the real run it plants violations in a scratch copy and insists
# that each one is caught, so the check cannot pass by being broken.
#   tools/check-sdk-platform-symbols.sh [folder …]
set -euo pipefail
cd "$(dirname "$0")/.."

scan() {
    python3 - "$1" <<'PY'
import pathlib, re, sys

# Linux-only symbols, and imports of the targets built on them.
FORBIDDEN = re.compile(
    r"\bGlibc\b|\bepoll_\w+|\bEPOLL\w*|\beventfd\w*|\bEFD_\w+|\bCLinux\b|\bCOpenSSL\b"
    r"|\bimport\s+(?:\w+\s+)?(?:SwitchboardTransport|SwitchboardCryptography|Synchronization)\b")
LINUX = r"(?:os\(\s*Linux\s*\)|canImport\(\s*Glibc\s*\))"
POSITIVE = re.compile(r"(?<!!)\s*" + LINUX)
NEGATED = re.compile(r"!\s*" + LINUX)

def linux_only(condition):
    return bool(POSITIVE.search(condition)) and not NEGATED.search(condition)

def negated_linux(condition):
    return bool(NEGATED.search(condition))

failures = []
for path in sorted(pathlib.Path(sys.argv[1]).rglob("*.swift")):
    # One entry per open #if: (is the current branch Linux-only, conditions of the chain so far).
    stack = []
    in_block_comment = False
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw
        if in_block_comment:
            if "*/" not in line:
                continue
            line = line.split("*/", 1)[1]
            in_block_comment = False
        line = re.sub(r"/\*.*?\*/", "", line)
        if "/*" in line:
            line, in_block_comment = line.split("/*", 1)[0], True
        line = line.split("//", 1)[0]
        directive = re.match(r"\s*#(if|elseif|else|endif)\b(.*)", line)
        if directive:
            kind, condition = directive.group(1), directive.group(2)
            if kind == "if":
                stack.append([linux_only(condition), [condition]])
            elif kind == "elseif" and stack:
                stack[-1] = [linux_only(condition), stack[-1][1] + [condition]]
            elif kind == "else" and stack:
                stack[-1] = [any(negated_linux(c) for c in stack[-1][1]), stack[-1][1]]
            elif kind == "endif" and stack:
                stack.pop()
            continue
        if any(guarded for guarded, _ in stack):
            continue
        found = FORBIDDEN.search(line)
        if found:
            failures.append(f"{path}:{number}: {found.group(0).strip()} outside #if os(Linux): {raw.strip()}")
for failure in failures:
    print(failure)
sys.exit(1 if failures else 0)
PY
}

# The check must catch each of these, and pass the guarded forms.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
plant() { printf '%s\n' "$2" > "$scratch/$1.swift"; }
violations=(
    "import Glibc"
    "let fd = epoll_create1(0)"
    "let flags = EPOLLIN"
    "let wake = eventfd(0, Int32(EFD_CLOEXEC))"
    "import CLinux"
    "@_implementationOnly import COpenSSL"
    "import SwitchboardTransport"
    "import struct SwitchboardCryptography.TLSContext"
    "import Synchronization"
    $'#if os(macOS)\nimport Glibc\n#endif'
    $'#if os(Linux)\n#else\nimport Glibc\n#endif'
    $'#if !os(Linux)\nimport Glibc\n#endif'
)
for index in "${!violations[@]}"; do
    rm -f "$scratch"/*.swift
    plant planted "${violations[$index]}"
    if scan "$scratch" >/dev/null; then
        echo "check-sdk-platform-symbols: a planted violation passed unnoticed: ${violations[$index]}" >&2
        exit 1
    fi
done
rm -f "$scratch"/*.swift
plant linux $'#if os(Linux)\nimport Glibc\nlet fd = epoll_create1(0)\n#endif'
plant glibc $'#if canImport(Glibc)\nimport Glibc\n#elseif canImport(Darwin)\nimport Darwin\n#endif'
plant negated $'#if !os(Linux)\nimport Darwin\n#else\nimport SwitchboardTransport\n#endif'
plant comment $'// epoll and Glibc are mentioned here only\n/// `import Glibc` in a doc comment'
if ! scan "$scratch"; then
    echo "check-sdk-platform-symbols: guarded or commented symbols were reported" >&2
    exit 1
fi

# The SDK's own code, and the targets it builds that are ready for Apple platforms (SwitchboardCore
# is not yet: it uses Synchronization's Mutex and Atomic, see README "Platforms").
folders=("$@")
[ ${#folders[@]} -gt 0 ] || folders=(Sources/SwitchboardClient Sources/SwitchboardWire Sources/SwitchboardReference)
for folder in "${folders[@]}"; do
    if ! scan "$folder"; then
        echo "check-sdk-platform-symbols: $folder must build on iOS and macOS: keep Linux-only symbols inside #if os(Linux)" >&2
        exit 1
    fi
done
