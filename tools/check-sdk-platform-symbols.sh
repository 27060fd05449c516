#!/usr/bin/env bash
# The SDK builds for iOS and macOS as well as Linux, from the floor Package.swift declares. This
# fails when Swift code in the targets the SDK builds (Sources/SwitchboardClient, SwitchboardCore,
# SwitchboardWire and SwitchboardReference, or the folders given) uses
#  - a Linux-only symbol outside a `#if os(Linux)` or `#if canImport(Glibc)` block: Glibc, epoll,
#    eventfd, CLOCK_MONOTONIC_COARSE, the CLinux or COpenSSL shims, or an import of
#    SwitchboardTransport / SwitchboardCryptography (epoll and OpenSSL);
#  - Synchronization (`import Synchronization`, `Mutex`, `Atomic…`; macOS 15 / iOS 18) anywhere
#    but inside the `#if` of Core's Locking/PortableSynchronization.swift: Core uses
#    `PortableMutex` / `PortableAtomic`, the SDK its `Locked`;
#  - outside Linux-only blocks, an API of the table below that is newer than Package.swift's
#    `.macOS(.vN)` / `.iOS(.vN)`. Duration and the clocks are macOS 13 / iOS 16: Core's
#    Clock/PortableDuration.swift is where Swift's Duration is picked on Linux, and the SDK's
#    targets count time in `PortableDuration` everywhere else (README, "Platforms").
# Comments do not count. Before the real run it plants violations in a scratch copy and insists
# that each one is caught, so the check cannot pass by being broken.
#   tools/check-sdk-platform-symbols.sh [folder …]
set -euo pipefail
cd "$(dirname "$0")/.."

# The deployment floor Package.swift declares, as "macOS iOS" major versions.
floor="$(python3 - <<'PY'
import re
text = open("Package.swift", encoding="utf-8").read()
mac = re.search(r"\.macOS\(\s*\.v(\d+)", text)
ios = re.search(r"\.iOS\(\s*\.v(\d+)", text)
if not (mac and ios):
    raise SystemExit("check-sdk-platform-symbols: no .macOS(.vN) and .iOS(.vN) in Package.swift")
print(mac.group(1), ios.group(1))
PY
)"

scan() {
    # scan FOLDER MACOS IOS
    python3 - "$@" <<'PY'
import pathlib, re, sys

folder, floor_mac, floor_ios = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

# Linux-only symbols, and imports of the targets built on them.
LINUX_ONLY = re.compile(
    r"\bGlibc\b|\bepoll_\w+|\bEPOLL\w*|\beventfd\w*|\bEFD_\w+|\bCLOCK_\w*COARSE\b|\bCLinux\b|\bCOpenSSL\b"
    r"|\bimport\s+(?:\w+\s+)?(?:SwitchboardTransport|SwitchboardCryptography)\b")
# Synchronization: allowed only inside the #if of the one file that picks Core's portable types.
SYNCHRONIZATION = re.compile(r"\bimport\s+(?:\w+\s+)?Synchronization\b|\bMutex\b|\bAtomic\w*\b")
PORTABLE_FILE = "SwitchboardCore/Locking/PortableSynchronization.swift"
# APIs newer than some floor: (pattern, what, macOS, iOS where it starts).
NEWER_APIS = [
    (r"\bDuration\b|\bContinuousClock\b|\bSuspendingClock\b|\bInstantProtocol\b|\bDurationProtocol\b"
     r"|\bany\s+Clock\b|\bsome\s+Clock\b|:\s*Clock\b|\bRegex\b|\bTask\s*\.\s*sleep\s*\(\s*(?:for|until)\s*:",
     "Duration, the clocks, Regex", 13, 16),
    (r"\.(?:firstRange|ranges|wholeMatch|prefixMatch|trimmingPrefix|replacing)\s*\(", "string algorithms", 13, 16),
    (r"\bURL\s*\(\s*filePath\s*:|\.appending\s*\(\s*(?:path|component|components|queryItems)\s*:"
     r"|\bURL\s*\.\s*(?:documentsDirectory|temporaryDirectory|homeDirectory|cachesDirectory)\b", "URL's path API", 13, 16),
    (r"\bwith(?:Throwing)?DiscardingTaskGroup\b|\b(?:Throwing)?DiscardingTaskGroup\b", "discarding task groups", 14, 17),
    (r"@Observable\b|\bimport\s+Observation\b", "Observation", 14, 17),
    (r"\bU?Int128\b", "Int128 and UInt128", 15, 18),
    (r"\bString\s*\(\s*validating:", "String(validating:)", 15, 18),
    (r"\bTaskExecutor\b|\bwithTaskExecutorPreference\b", "task executors", 15, 18),
    (r"\bInlineArray\b|\b(?:Mutable|Raw|MutableRaw|UTF8)?Span\b", "InlineArray and Span", 26, 26),
    (r"\bTask\.immediate\b|\bTask\s*(?:<[^>]*>)?\s*\(\s*name:", "Task.immediate and named tasks", 26, 26),
]
NEWER = [(re.compile(pattern), what, mac, ios) for pattern, what, mac, ios in NEWER_APIS
         if mac > floor_mac or ios > floor_ios]
LINUX = r"(?:os\(\s*Linux\s*\)|canImport\(\s*Glibc\s*\))"
POSITIVE = re.compile(r"(?<!!)\s*" + LINUX)
NEGATED = re.compile(r"!\s*" + LINUX)

def linux_only(condition):
    return bool(POSITIVE.search(condition)) and not NEGATED.search(condition)

def negated_linux(condition):
    return bool(NEGATED.search(condition))

failures = []
for path in sorted(pathlib.Path(folder).rglob("*.swift")):
    portable_file = path.as_posix().endswith(PORTABLE_FILE)
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
        found = SYNCHRONIZATION.search(line)
        if found and not (portable_file and stack):
            failures.append(f"{path}:{number}: {found.group(0).strip()} (Synchronization: macOS 15 / iOS 18) outside "
                            f"{PORTABLE_FILE}'s #if; use PortableMutex / PortableAtomic (Core) or Locked (SDK): {raw.strip()}")
        if any(guarded for guarded, _ in stack):
            continue
        found = LINUX_ONLY.search(line)
        if found:
            failures.append(f"{path}:{number}: {found.group(0).strip()} outside #if os(Linux): {raw.strip()}")
        for pattern, what, mac, ios in NEWER:
            found = pattern.search(line)
            if found:
                failures.append(f"{path}:{number}: {found.group(0).strip()} ({what}: macOS {mac} / iOS {ios}) is newer "
                                f"than Package.swift's floor, macOS {floor_mac} / iOS {floor_ios}: {raw.strip()}")
for failure in failures:
    print(failure)
sys.exit(1 if failures else 0)
PY
}

# The check must catch each of these, and pass the guarded forms.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
plant() { mkdir -p "$(dirname "$scratch/$1")"; printf '%s\n' "$2" > "$scratch/$1.swift"; }
violations=(
    "import Glibc"
    "let fd = epoll_create1(0)"
    "let flags = EPOLLIN"
    "let wake = eventfd(0, Int32(EFD_CLOEXEC))"
    "clock_gettime(CLOCK_MONOTONIC_COARSE, &time)"
    "import CLinux"
    "@_implementationOnly import COpenSSL"
    "import SwitchboardTransport"
    "import struct SwitchboardCryptography.TLSContext"
    "import Synchronization"
    "private let state = Mutex(0)"
    "let count: Atomic<Int>"
    "func load(ordering: AtomicLoadOrdering)"
    $'#if os(Linux)\nimport Synchronization\n#endif'
    $'#if os(Linux)\nlet state = Mutex(0)\n#endif'
    "let wide: UInt128 = 0"
    "await withDiscardingTaskGroup { _ in }"
    "let text = String(validating: bytes, as: UTF8.self)"
    "let small = InlineArray<2, Int>(repeating: 0)"
    "var now: Duration { .zero }"
    "try await Task.sleep(for: .seconds(1))"
    "let found = text.firstRange(of: \"x\")"
    "let file = URL(filePath: \"/tmp/log\")"
    $'#if os(macOS)\nimport Glibc\n#endif'
    $'#if os(Linux)\n#else\nimport Glibc\n#endif'
    $'#if !os(Linux)\nimport Glibc\n#endif'
)
# (Scanned against the lowest floor the SDK declares, macOS 12 / iOS 15, whatever Package.swift says.)
for index in "${!violations[@]}"; do
    rm -rf "${scratch:?}"/*
    plant planted "${violations[$index]}"
    if scan "$scratch" 12 15 >/dev/null; then
        echo "check-sdk-platform-symbols: a planted violation passed unnoticed: ${violations[$index]}" >&2
        exit 1
    fi
done
# Synchronization outside the portable file's #if, in that file itself.
rm -rf "${scratch:?}"/*
plant SwitchboardCore/Locking/PortableSynchronization $'import Synchronization\n#if os(macOS)\n#endif'
if scan "$scratch" $floor >/dev/null; then
    echo "check-sdk-platform-symbols: Synchronization outside the portable file's #if passed unnoticed" >&2
    exit 1
fi
# Duration is macOS 13 / iOS 16: below that floor the check must say so, from it not.
rm -rf "${scratch:?}"/*
plant clock "var now: Duration { .zero }"
if scan "$scratch" 12 15 >/dev/null || ! scan "$scratch" 13 16; then
    echo "check-sdk-platform-symbols: Duration is not held to macOS 13 / iOS 16" >&2
    exit 1
fi
rm -rf "${scratch:?}"/*
plant linux $'#if os(Linux)\nimport Glibc\nlet fd = epoll_create1(0)\nlet wide: UInt128 = 0\n#endif'
plant glibc $'#if canImport(Glibc)\nimport Glibc\n#elseif canImport(Darwin)\nimport Darwin\n#endif'
plant negated $'#if !os(Linux)\nimport Darwin\n#else\nimport SwitchboardTransport\n#endif'
plant comment $'// epoll, Glibc, Mutex and UInt128 are mentioned here only\n/// `import Synchronization` in a doc comment'
plant names $'let count: PortableAtomic<Int>\nlet lock = PortableMutex(0)\nlet cell: LockedAtomic<Int>\nlet span: PortableDuration = .zero\nlet stand: NanosecondDuration = .seconds(1)\ntry await clock.sleep(for: span)'
plant SwitchboardCore/Locking/PortableSynchronization \
    $'#if os(Linux) && !SWITCHBOARD_PORTABLE\nimport Synchronization\ntypealias PortableMutex<Value> = Mutex<Value>\ntypealias PortableAtomic<Value: AtomicRepresentable> = Atomic<Value>\n#else\ntypealias PortableMutex<Value> = PthreadMutex<Value>\n#endif'
plant SwitchboardCore/Clock/PortableDuration \
    $'#if os(Linux) && !SWITCHBOARD_PORTABLE_TIME\npublic typealias PortableDuration = Swift.Duration\n#else\npublic typealias PortableDuration = NanosecondDuration\n#endif'
if ! scan "$scratch" $floor; then
    echo "check-sdk-platform-symbols: guarded or commented symbols were reported" >&2
    exit 1
fi

# The SDK's own code and every target it builds.
folders=("$@")
[ ${#folders[@]} -gt 0 ] || folders=(Sources/SwitchboardClient Sources/SwitchboardCore Sources/SwitchboardWire Sources/SwitchboardReference)
for folder in "${folders[@]}"; do
    if ! scan "$folder" $floor; then
        echo "check-sdk-platform-symbols: $folder must build on iOS and macOS from Package.swift's floor (macOS ${floor% *} / iOS ${floor#* })" >&2
        exit 1
    fi
done
