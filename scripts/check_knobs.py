#!/usr/bin/env python3
"""Keeps the table of TROUPE_* environment variables in one piece.

The table is core/include/troupe/knobs.hpp (each variable with its default
and what it sets); docs/knobs.md shows it, between two markers, generated
by this script. Checks, and exits 1 naming what is wrong, unless:
  - docs/knobs.md's generated table is exactly what knobs.hpp says
    (`--write` regenerates it);
  - every knob has a name, a default and a documentation;
  - no library source (core, channels, io, waituntil, mutexstmt, actors)
    calls getenv for a TROUPE_* name (they read through troupe/knobs.hpp);
  - every TROUPE_* variable read anywhere else in the tree (getenv in C++,
    $VAR in shell, os.environ in Python) is a knob, or a row of the test
    harness table in docs/knobs.md, with a default and a documentation.

Usage: check_knobs.py [--write] [SOURCE_ROOT]
"""
import os
import re
import sys

BEGIN = "<!-- knobs table: generated from core/include/troupe/knobs.hpp by scripts/check_knobs.py --write -->"
END = "<!-- end of the knobs table -->"
HARNESS = "## Test harness variables"
LIBRARY_DIRS = ["core", "channels", "io", "waituntil", "mutexstmt", "actors"]
SKIP_DIRS = {"build", ".git", "subprojects"}


def c_strings_fields(body):
    """Splits a brace initializer of string literals into fields (adjacent
    literals concatenate; commas outside literals separate fields)."""
    fields, cur, i = [], None, 0
    while i < len(body):
        c = body[i]
        if c == '"':
            j = i + 1
            s = []
            while body[j] != '"':
                if body[j] == "\\":
                    s.append(body[j + 1])
                    j += 2
                else:
                    s.append(body[j])
                    j += 1
            cur = (cur or "") + "".join(s)
            i = j + 1
        elif c == ",":
            fields.append(cur)
            cur = None
            i += 1
        else:
            i += 1
    fields.append(cur)
    return fields


def read_knobs(root):
    text = open(os.path.join(root, "core/include/troupe/knobs.hpp")).read()
    knobs = []
    for m in re.finditer(r"inline constexpr knob (\w+)\s*\{(.*?)\};", text, re.S):
        f = c_strings_fields(m.group(2))
        if len(f) != 3:
            raise SystemExit(f"check_knobs: knobs.hpp: knob {m.group(1)} needs 3 strings, has {len(f)}")
        knobs.append((m.group(1), *f))
    order = re.search(r"inline constexpr const knob\* all\[\]\s*=\s*\{(.*?)\};", text, re.S)
    listed = re.findall(r"&(\w+)", order.group(1)) if order else []
    return knobs, listed


def table(knobs):
    rows = ["| variable | default | what it sets |", "|---|---|---|"]
    for _, name, fallback, doc in knobs:
        rows.append(f"| `{name}` | {fallback} | {doc} |")
    return "\n".join(rows)


def files(root, dirs, exts):
    for d in dirs:
        for base, subdirs, names in os.walk(os.path.join(root, d)):
            subdirs[:] = [s for s in subdirs if s not in SKIP_DIRS and not s.startswith("build")]
            for n in names:
                if n.endswith(exts):
                    yield os.path.join(base, n)


def main(argv):
    write = "--write" in argv
    args = [a for a in argv if a != "--write"]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    errors = []
    knobs, listed = read_knobs(root)
    names = {k[1] for k in knobs}
    for ident, name, fallback, doc in knobs:
        if not name or not name.startswith("TROUPE_"):
            errors.append(f"knobs.hpp: knob {ident}: the name must be a TROUPE_* variable")
        if not fallback:
            errors.append(f"knobs.hpp: knob {ident} ({name}): no default")
        if not doc:
            errors.append(f"knobs.hpp: knob {ident} ({name}): no documentation")
    if sorted(listed) != sorted(k[0] for k in knobs):
        errors.append("knobs.hpp: knobs::all must list every knob exactly once")
    by_ident = {k[0]: k for k in knobs}
    ordered = [by_ident[i] for i in listed if i in by_ident]

    doc_path = os.path.join(root, "docs/knobs.md")
    doc = open(doc_path).read()
    if BEGIN not in doc or END not in doc:
        raise SystemExit(f"check_knobs: docs/knobs.md lacks the markers:\n{BEGIN}\n{END}")
    head, rest = doc.split(BEGIN, 1)
    current, tail = rest.split(END, 1)
    want = "\n" + table(ordered) + "\n"
    if current != want:
        if write:
            open(doc_path, "w").write(head + BEGIN + want + END + tail)
            print("check_knobs: docs/knobs.md regenerated")
        else:
            errors.append("docs/knobs.md: the table differs from core/include/troupe/knobs.hpp "
                          "(run python3 scripts/check_knobs.py --write); expected:\n" + want)

    # The test harness table: | `TROUPE_X` | default | what it does |
    harness = {}
    if HARNESS in tail:
        for m in re.finditer(r"^\|\s*`(TROUPE_[A-Z0-9_]+)`\s*\|([^|]*)\|([^|]*)\|", tail.split(HARNESS, 1)[1], re.M):
            harness[m.group(1)] = (m.group(2).strip(), m.group(3).strip())
    for name, (fallback, what) in harness.items():
        if not fallback or not what:
            errors.append(f"docs/knobs.md: test harness variable {name} needs a default and a description")

    getenv_troupe = re.compile(r'getenv\(\s*"(TROUPE_[A-Z0-9_]+)"')
    for path in files(root, LIBRARY_DIRS, (".cpp", ".hpp", ".h")):
        for m in getenv_troupe.finditer(open(path, errors="replace").read()):
            errors.append(f"{os.path.relpath(path, root)}: getenv(\"{m.group(1)}\"): read it through "
                          "troupe/knobs.hpp")

    reads = [(getenv_troupe, (".cpp", ".hpp", ".h")),
             (re.compile(r"\$\{?(TROUPE_[A-Z0-9_]+)"), (".sh",)),
             (re.compile(r"environ(?:\.get\(|\[)\s*['\"](TROUPE_[A-Z0-9_]+)"), (".py",))]
    for rx, exts in reads:
        for path in files(root, ["tests", "bench", "examples", "scripts"], exts):
            for m in rx.finditer(open(path, errors="replace").read()):
                n = m.group(1)
                if n not in names and n not in harness:
                    errors.append(f"{os.path.relpath(path, root)}: reads {n}, which is neither a knob "
                                  "(troupe/knobs.hpp) nor a test harness variable (docs/knobs.md)")
    if errors:
        print("\n".join("check_knobs: " + e for e in errors), file=sys.stderr)
        return 1
    print(f"check_knobs: {len(knobs)} knobs, {len(harness)} test harness variables: in step")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
