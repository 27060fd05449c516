#!/usr/bin/env python3
"""Checks every frame example of docs/PROTOCOL.md with PyPI's `msgpack`, independently of the Swift codec.

    python3 tools/check_protocol_examples.py [PROTOCOL.md]

An example is a fenced block whose info string is `msgpack`, holding the frame's bytes in hex;
the last inline code span beginning with `{` in the paragraph before it is the frame's documented
form (JSON, with Python's b"..." for bin). Each must satisfy packb(form) == bytes and
unpackb(bytes) == form, keys in the documented order. Prints one line per example and a summary
`N examples checked: T1 T2 ...` (the frame types, in document order).
Exits 0 when every example holds, 1 when one does not or none is found, 2 without `msgpack`.
"""

import ast
import os
import re
import sys

from pydeps import require

require("msgpack")

import msgpack  # noqa: E402

FENCE = "```"
MARKER = "```msgpack"
FORM = re.compile(r"`(\{.*?\})`")
LITERALS = {"true": True, "false": False, "null": None}


class JSONNames(ast.NodeTransformer):
    """Turns JSON's true, false and null into Python constants, so the form is a Python literal."""

    def visit_Name(self, node):
        if node.id not in LITERALS:
            raise ValueError(f"unknown name {node.id!r} in a documented form")
        return ast.copy_location(ast.Constant(LITERALS[node.id]), node)


def parse_form(text):
    """The value of a documented form: a JSON-like map literal."""
    tree = JSONNames().visit(ast.parse(text, mode="eval"))
    return ast.literal_eval(tree)


def examples(document):
    """(line number, form text, hex) for every `msgpack` block of `document`."""
    lines = document.split("\n")
    found = []
    for index, line in enumerate(lines):
        if line.strip() != MARKER:
            continue
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith(FENCE))
        hex_text = "".join(part.strip() for part in lines[index + 1:end])
        # The paragraph before the block, up to the previous blank line or fence.
        paragraph = []
        for before in reversed(lines[:index]):
            if paragraph and (not before.strip() or before.startswith(FENCE)):
                break
            if before.strip():
                paragraph.insert(0, before)
        forms = FORM.findall(" ".join(paragraph))
        found.append((index + 1, forms[-1] if forms else None, hex_text))
    return found


def ordered(value):
    """`value` with every map turned into its list of pairs, so key order counts in comparisons."""
    if isinstance(value, dict):
        return [(key, ordered(item)) for key, item in value.items()]
    if isinstance(value, (list, tuple)):
        return [ordered(item) for item in value]
    return value


def check(line, form_text, hex_text):
    """A failure message for one example, or None when it holds."""
    if form_text is None:
        return f"line {line}: no documented form (`{{...}}`) before the block"
    try:
        form = parse_form(form_text)
        data = bytes.fromhex(hex_text)
    except (ValueError, SyntaxError) as error:
        return f"line {line}: cannot read the example: {error}"
    packed = msgpack.packb(form, use_bin_type=True)
    if packed != data:
        return f"line {line}: packb(form) is {packed.hex()}, the document says {hex_text}"
    unpacked = msgpack.unpackb(data, raw=False, strict_map_key=False)
    if ordered(unpacked) != ordered(form):
        return f"line {line}: unpackb(bytes) is {unpacked!r}, the document says {form!r}"
    return None


def main(arguments):
    default = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "PROTOCOL.md")
    path = arguments[0] if arguments else default
    found = examples(open(path, encoding="utf-8").read())
    failures = 0
    types = []
    for line, form_text, hex_text in found:
        failure = check(line, form_text, hex_text)
        if failure:
            failures += 1
            print("FAIL", failure)
        else:
            types.append(parse_form(form_text)["t"])
            print(f"ok   line {line}: {form_text[:100]}")
    print(f"{len(types)} examples checked: {' '.join(types)}")
    if failures or not found:
        print(f"{failures} of {len(found)} examples failed" if found else "no examples found")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
