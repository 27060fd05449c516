#!/usr/bin/env python3
"""Fails when the code the SDK builds needs the type metadata of a typed-throws function type.

A function type that throws a concrete type (`(X) throws(RtmError) -> Y`) has type metadata only on
Swift 6 runtimes (macOS 15 / iOS 18), above the SDK's floor. Code that never needs that metadata
deploys lower; code that does is refused by an Apple compiler ("runtime support for typed throws
function types is only available in macOS 15.0 or newer"), which no Linux compiler reports. The
metadata is needed where such a type is a generic argument (`[String: Handler]`, `Mutex<…>`, a
generic call's `Result`), is boxed as `Any` or an existential, is cast, or is named as `X.self`.

This type-checks Reference, Core, Wire and the SDK as built with SWITCHBOARD_PORTABLE (what Apple
platforms get), reads the compiler's AST dump and reports each such place. A planted example must
be caught first, so the check cannot pass by being broken.
    tools/check-sdk-typed-throws.py [scratch path, default .build/portable]
"""
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
TARGETS = ["SwitchboardReference", "SwitchboardCore", "SwitchboardWire", "SwitchboardClient"]
TYPED = r"throws\((?!any Error\))[^)]+\)"
LOCATION = re.compile(r"location=(\S+\.swift:\d+:\d+)")


def dump_ast(module, sources, modules_dir):
    """The compiler's AST dump of `sources` as module `module` (it goes to standard error)."""
    scratch = modules_dir.parent
    command = [
        "swiftc", "-dump-ast", "-parse-as-library", "-swift-version", "6", "-DSWITCHBOARD_PORTABLE",
        "-module-name", module, "-I", str(modules_dir),
        "-Xcc", f"-fmodule-map-file={scratch / 'CLinux.build' / 'module.modulemap'}",
        "-Xcc", f"-I{ROOT / 'Sources' / 'CLinux' / 'include'}",
        "-Xcc", f"-fmodule-map-file={ROOT / 'Sources' / 'COpenSSL' / 'module.modulemap'}",
        "-Xcc", f"-fmodule-map-file={ROOT / 'Sources' / 'CZlib' / 'module.modulemap'}",
    ] + [str(source) for source in sources]
    result = subprocess.run(command, capture_output=True, text=True, errors="replace")
    text = result.stdout + result.stderr
    if result.returncode != 0 or " error: " in text:
        errors = [line for line in text.splitlines() if " error: " in line][:5]
        sys.exit(f"check-sdk-typed-throws: {module} does not type-check:\n" + "\n".join(errors))
    return text


def typed_aliases(dumps):
    """Names of type aliases whose type is a typed-throws function type: the dump prints them by name."""
    names = set()
    for text in dumps:
        for match in re.finditer(r'\(typealias [^\n]*?"(\w+)" interface_type="[^"]*" access=\w+ type="([^"]*)"', text):
            if re.search(TYPED, match.group(2)):
                names.add(match.group(1))
    return names


def findings(text, aliases):
    """(location, what, type) for each place in one module's dump that needs the metadata."""
    typed = re.compile(TYPED + (r"|\b(?:" + "|".join(sorted(aliases)) + r")\b(?!\.Type)" if aliases else ""))
    lines = text.splitlines()

    def location(index):
        for back in range(index, max(index - 80, -1), -1):
            match = LOCATION.search(lines[back])
            if match:
                return match.group(1)
        return "?"

    def in_generic_argument(type_text):
        spelled = type_text.replace("->", "=>")
        for match in typed.finditer(spelled):
            depth = sum(1 if c in "<[" else -1 if c in ">]" else 0 for c in spelled[:match.start()])
            if depth > 0:
                return True
        return False

    found = {}
    for index, line in enumerate(lines):
        for match in re.finditer(r"substitution_map generic_signature=<[^>]*> (.*?)\)\]", line):
            if typed.search(match.group(1)):
                found.setdefault(location(index), ("a generic call's substitution", match.group(1)))
        for match in re.finditer(r'(?:interface_)?type="([^"]*)"', line):
            if typed.search(match.group(1)) and in_generic_argument(match.group(1)):
                found.setdefault(location(index), ("a generic argument", match.group(1)))
        stripped = line.strip()
        if stripped.startswith("(type_expr"):
            match = re.search(r'type="([^"]*)"', stripped)
            if match and typed.search(match.group(1)):
                found.setdefault(location(index), ("a metatype value", match.group(1)))
        if re.match(r"\((erasure_expr|conditional_checked_cast_expr|forced_checked_cast_expr|is_expr)\b", stripped):
            for following in lines[index + 1:index + 4]:
                match = re.search(r'type="([^"]*)"', following)
                if match:
                    if typed.search(match.group(1)):
                        found.setdefault(location(index), ("a value boxed or cast", match.group(1)))
                    break
    return [(where, what, type_text) for where, (what, type_text) in sorted(found.items())]


def check_planted():
    """The check must find each use in a planted file, and nothing in its allowed forms."""
    planted = """
struct Refusal: Error {}
typealias Handler = @Sendable () throws(Refusal) -> Int
struct Entry: Sendable { let handler: Handler }
func table(_ handler: @escaping Handler) -> [String: Handler] { ["a": handler] }
func boxed(_ handler: @escaping Handler) -> Any { handler }
func metatype() -> Any.Type { (() throws(Refusal) -> Void).self }
func allowed(_ handler: @escaping Handler) -> Int? {
    let entries = ["a": Entry(handler: handler)]
    let optional: Handler? = entries["a"]?.handler
    return try? optional?()
}
"""
    with tempfile.TemporaryDirectory() as directory:
        source = pathlib.Path(directory) / "Planted.swift"
        source.write_text(planted)
        result = subprocess.run(
            ["swiftc", "-dump-ast", "-parse-as-library", "-swift-version", "6", str(source)],
            capture_output=True, text=True, errors="replace")
        text = result.stdout + result.stderr
    lines = {int(where.rsplit(":", 2)[1]) for where, _, _ in findings(text, typed_aliases([text]))}
    expected = {5, 6, 7}
    if lines != expected:
        sys.exit(f"check-sdk-typed-throws: the planted uses were not found as they should be "
                 f"(lines {sorted(lines)}, expected {sorted(expected)})")


def main():
    scratch = ROOT / (sys.argv[1] if len(sys.argv) > 1 else ".build/portable") / "debug"
    check_planted()
    dumps = {}
    for target in TARGETS:
        sources = (scratch / f"{target}.build" / "sources").read_text().split()
        dumps[target] = dump_ast(target, sources, scratch / "Modules")
    aliases = typed_aliases(dumps.values())
    failures = [
        f"{where.split(str(ROOT) + '/')[-1]}: {what} is a typed-throws function type ({type_text})"
        for target in TARGETS for where, what, type_text in findings(dumps[target], aliases)
    ]
    for failure in failures:
        print(failure)
    if failures:
        sys.exit("check-sdk-typed-throws: this needs type metadata only macOS 15 / iOS 18 have; keep the "
                 "function in a struct of its own (ExtensionDirectory.Entry)")
    print(f"check-sdk-typed-throws: no typed-throws function type needs its metadata in {', '.join(TARGETS)}")


main()
