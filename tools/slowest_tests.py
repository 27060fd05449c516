#!/usr/bin/env python3
"""The slowest tests of a run: reads `swift test`'s console output on stdin (passing it through to
stdout with --tee) and prints the N longest "passed after" (or "failed after") times, with the
file that holds each test.

Swift Testing counts a test's time from when the run scheduled it. tools/test.sh lets four tests
per core run at a time, so most tests wait for a turn and that wait is in their time; for a list
that means something, run every test at once on an otherwise idle machine:

    SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=100000 tools/test.sh 2>&1 | python3 tools/slowest_tests.py --tee
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENDED = re.compile(r"Test (.+?) (passed|failed) after ([0-9.]+) seconds")


def file_of(name):
    """The test file that declares `name`: a function (`fooBar()`) or a display name (`"…"`)."""
    if name.startswith('"'):
        pattern = re.compile(r"@Test\(" + re.escape(name))
    else:
        pattern = re.compile(r"func " + re.escape(name.split("(")[0]) + r"\(")
    for directory, _, files in sorted(os.walk(os.path.join(ROOT, "Tests"))):
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
    took, summary = [], ""
    for raw in sys.stdin.buffer:
        line = raw.decode("utf-8", "replace")
        if args.tee:
            sys.stdout.write(line)
        if "Test run with" in line:
            summary = line.strip()
            continue
        ended = ENDED.search(line)
        if ended:
            took.append((float(ended.group(3)), re.sub(r" with \d+ test cases?$", "", ended.group(1)), ended.group(2)))
    took.sort(reverse=True)
    print(summary)
    print("| seconds | test | file |")
    print("| ---: | --- | --- |")
    for seconds, name, result in took[: args.count]:
        print(f"| {seconds:.1f} | `{name}`{'' if result == 'passed' else ' (failed)'} | `{file_of(name)}` |")


if __name__ == "__main__":
    main()
