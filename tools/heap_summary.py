#!/usr/bin/env python3
"""Sums the live heap heaptrack recorded by allocation site, per connection.

    heaptrack_print --print-leaks 1 ... | swift demangle --simplified | tools/heap_summary.py N [TOP]

Reads heaptrack_print's "MEMORY LEAKS" tree (demangled) on stdin. When the server was killed
with SIGKILL while N connections were open, what heaptrack calls leaked is the live heap at that
moment. Each block of the tree ("X leaked over C calls from:" and its stack) is credited to the
innermost frame of the stack that is the server's own code, not the runtime's or the standard
library's (allocation, dictionary and array internals are skipped); prints the total, and the TOP
sites (default 30) by bytes, in bytes per connection.
"""
import re
import sys

RUNTIME = (
    "swift_", "static _", "specialized _", "_", "specialized static _", "Dictionary", "Set", "Array",
    "ContiguousArray", "specialized Dictionary", "specialized Set", "specialized Array",
    "specialized ContiguousArray", "specialized static Array", "specialized static ContiguousArray",
    "specialized static ManagedBuffer", "static ManagedBuffer", "specialized CompactSet",
    "specialized CompactDictionary", "CompactSet", "CompactDictionary", "malloc", "operator new",
    "static UnsafeMutable", "specialized static UnsafeMutable", "String.", "specialized String",
    "specialized static String", "BidirectionalCollection", "specialized BidirectionalCollection",
    "outlined ", "thunk for", "partial apply", "closure #1 in closure #1 in specialized _",
)
UNITS = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}


def size(text):
    match = re.match(r"([0-9.]+)([KMG]?)B?$", text)
    return float(match.group(1)) * UNITS[match.group(2)] if match else 0.0


def blocks(lines):
    """(bytes, calls, frames) of each stack under an allocating function.

    A top-level entry ("X leaked over C calls from", no colon) names an allocating function; the
    entries under it ("… calls from:") are its callers' stacks, a frame a line, indented by four."""
    found, current = [], None
    for line in lines:
        match = re.match(r"^([0-9.]+[KMG]?B?) leaked over (\d+) calls from(:?)$", line.strip())
        if match:
            current = (size(match.group(1)), int(match.group(2)), []) if match.group(3) else None
            if current is not None:
                found.append(current)
            continue
        if current is not None and line.startswith("    ") and not line.startswith("      "):
            current[2].append(line.strip())
    return found


def site(frames):
    for frame in frames:
        if not frame.startswith(RUNTIME):
            return frame[:110]
    return frames[0][:110] if frames else "?"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    connections = int(sys.argv[1])
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    lines = sys.stdin.read().splitlines()
    total = next((size(m.group(1)) for m in (re.match(r"total memory leaked: ([0-9.]+[KMG]?)", l) for l in lines) if m), 0.0)
    by_site = {}
    for amount, calls, frames in blocks(lines):
        key = site(frames)
        bytes_, count = by_site.get(key, (0.0, 0))
        by_site[key] = (bytes_ + amount, count + calls)
    print(f"live heap: {total / 1e6:.2f} MB, {total / connections:.0f} bytes per connection ({connections} connections)")
    print(f"{'bytes/conn':>10} {'allocations':>11}  site")
    for key, (amount, count) in sorted(by_site.items(), key=lambda item: -item[1][0])[:top]:
        print(f"{amount / connections:10.0f} {count:11d}  {key}")


if __name__ == "__main__":
    main()
