#!/usr/bin/env python3
"""Doxygen input filter for troupe's headers (see docs/meson.build).

A troupe header opens with a `///` comment describing the whole file (with
a usage example) before its #includes. Doxygen would attach that comment to
the next declaration (usually `namespace troupe`), merging every header's
introduction into one namespace page. This filter marks the opening comment
as the file's documentation by putting a `/// \\file` line above it. Other
input passes through unchanged.
Usage: doxygen_filter.py FILE   (writes the filtered text to stdout)
"""
import sys


def main(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if path.endswith(".hpp"):
        for i, line in enumerate(lines):
            stripped = line.strip()
            if stripped.startswith("///"):
                lines.insert(i, "/// \\file")
                break
            if stripped and not stripped.startswith(("#pragma", "//")):
                break  # code before any /// comment: no file comment
    sys.stdout.write("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1])
