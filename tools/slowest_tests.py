#!/usr/bin/env python3
"""The slowest tests of a run, by their own time: reads `swift test`'s console output on stdin
(passing it through to stdout when asked) and prints, for the slowest N, the seconds from each
test's "started" line to its "passed" or "failed" line, with the file that holds it.

With a bounded parallel width (tools/test.sh runs four tests per core at a time) a test's own
"passed after" also counts the time it waited for a turn; the time between its two lines does not.

    tools/test.sh 2>&1 | python3 tools/slowest_tests.py [--count 15] [--tee]
"""
import argparse
import os
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STARTED = re.compile(r"Test (.+?) started\.")
ENDED = re.compile(r"Test (.+?) (passed|failed) after [0-9.]+ seconds")


def file_of(name):
    """The test file that declares the function `name` (e.g. `fooBar()` or `fooBar(seed:)`)."""
    if name.startswith('"'):  # a display name: @Test("…")
        pattern = re.compile(r"@Test\(" + re.escape(name))
    else:
        pattern = re.compile(r"func " + re.escape(name.split("(")[0]) + r"\(")
    for directory, _, files in os.walk(os.path.join(ROOT, "Tests")):
        for file in sorted(files):
            if file.endswith(".swift"):
                path = os.path.join(directory, file)
                with open(path, encoding="utf-8") as handle:
                    if pattern.search(handle.read()):
                        return os.path.relpath(path, ROOT)
    return "?"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=15)
    parser.add_argument("--tee", action="store_true", help="pass the output through to stdout")
    args = parser.parse_args()
    begun, took = {}, []
    origin = time.monotonic()
    summary = ""
    for raw in sys.stdin.buffer:
        line = raw.decode("utf-8", "replace")
        if args.tee:
            sys.stdout.write(line)
        now = time.monotonic() - origin
        if "Test run with" in line:
            summary = line.strip()
            continue
        started = STARTED.search(line)
        if started and "case passing" not in line:
            begun.setdefault(started.group(1), now)
            continue
        ended = ENDED.search(line)
        if ended:
            name = re.sub(r" with \d+ test cases?$", "", ended.group(1))
            if name in begun:
                took.append((now - begun.pop(name), name, ended.group(2)))
    took.sort(reverse=True)
    print(summary)
    print("| seconds | test | file |")
    print("| ---: | --- | --- |")
    for seconds, name, result in took[: args.count]:
        mark = "" if result == "passed" else " (failed)"
        print(f"| {seconds:.1f} | `{name}`{mark} | `{file_of(name)}` |")


if __name__ == "__main__":
    main()
