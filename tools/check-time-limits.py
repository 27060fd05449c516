#!/usr/bin/env python3
"""Fails when a test could hang the suite: every test must run under a Swift Testing time limit.

    python3 tools/check-time-limits.py [Tests]

The rules: every `@Suite` carries `.timeLimit(...)`; every type that holds `@Test` functions is an
explicit `@Suite` (an implicit suite has no traits), and so is the type an `extension` with tests
extends; a `@Test` function outside any type carries `.timeLimit(...)` itself. A hung test then
fails with its name instead of stalling the run. Exits 0 when the rules hold, 1 with one line per
place that breaks them.
"""

import os
import re
import sys

DECLARATION = re.compile(r"^\s*(?:(?:public|private|fileprivate|internal|final|nonisolated)\s+)*"
                         r"(struct|class|enum|actor|extension|func)\s+([A-Za-z_][\w.]*)")
STRING = re.compile(r'"(?:\\.|[^"\\])*"')


def code_lines(text):
    """The file's lines with comments and string literals blanked, so braces count right."""
    lines = []
    closing = None  # what ends the multi-line string or comment the scan is inside
    for line in text.split("\n"):
        if closing:
            if closing not in line:
                lines.append("")
                continue
            line, closing = line.split(closing, 1)[1], None
        line = re.sub(r'""".*?"""', '""', line)
        if '"""' in line:
            line, closing = line.split('"""', 1)[0], '"""'
        line = STRING.sub('""', line)
        line = re.sub(r"/\*.*?\*/", "", line)
        if "/*" in line:
            line, closing = line.split("/*", 1)[0], "*/"
        lines.append(line.split("//", 1)[0])
    return lines


def without_attributes(line):
    """`line` after its leading attributes (`@Suite(...)`, `@Test`, `@MainActor` ...), or "" when
    an attribute's parentheses go on past the line."""
    rest = line.strip()
    while rest.startswith("@"):
        name = re.match(r"@[\w.]+", rest)
        rest = rest[name.end():]
        if rest.startswith("("):
            depth = 0
            for index, character in enumerate(rest):
                depth += {"(": 1, ")": -1}.get(character, 0)
                if depth == 0:
                    rest = rest[index + 1:]
                    break
            else:
                return ""
        rest = rest.lstrip()
    return rest


def scan(path):
    """(suites, problems): the types declared with `@Suite(... .timeLimit ...)`, and, still to be
    resolved against every file's suites, the tested types and extensions of this file."""
    limited, tested, problems = set(), [], []
    attributes = ""
    depth = 0
    # The top-level type each depth-0 declaration opened: (kind, name, attributes).
    outer = None
    for number, line in enumerate(code_lines(open(path, encoding="utf-8").read()), 1):
        stripped = line.strip()
        match = DECLARATION.match(without_attributes(line))
        if not match and (stripped.startswith("@") or attributes):
            attributes += " " + stripped
        if match:
            kind, name = match.groups()
            text = attributes + " " + stripped
            if "@Suite" in text and ".timeLimit" not in text:
                problems.append(f"{path}:{number}: @Suite {name} has no .timeLimit")
            if kind != "func" and "@Suite" in text and ".timeLimit" in text:
                limited.add(name)
            if depth == 0 and kind != "func":
                outer = (kind, name, text, number)
            if kind == "func" and "@Test" in text:
                if depth == 0:
                    if ".timeLimit" not in text:
                        problems.append(f"{path}:{number}: @Test {name} outside a suite has no .timeLimit")
                elif outer is not None:
                    tested.append((path, outer))
            attributes = ""
        depth += line.count("{") - line.count("}")
        if depth == 0:
            outer = None
    return limited, tested, problems


def main(arguments):
    root = arguments[0] if arguments else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests")
    limited, tested, problems = set(), [], []
    for folder, _, files in os.walk(root):
        for file in sorted(files):
            if file.endswith(".swift"):
                found = scan(os.path.join(folder, file))
                limited |= found[0]
                tested += found[1]
                problems += found[2]
    for path, (kind, name, text, number) in sorted(set(tested), key=lambda entry: (entry[0], entry[1][3])):
        if name not in limited:
            what = "extends" if kind == "extension" else "is"
            problems.append(f"{path}:{number}: {name} holds @Test functions but {what} no @Suite with a .timeLimit")
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} places without a time limit: add .timeLimit(.minutes(N)) to the suite")
        return 1
    print(f"every test runs under a time limit ({len(limited)} suites)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
