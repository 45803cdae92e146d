#!/usr/bin/env python3
"""Checks the relative links of troupe's Markdown documentation.

Every `[text](target)` in README.md, docs/, bench/*.md and
bench/history/*.md whose target is not a URL must name a file or
folder inside the repository, and a `#fragment` must name a heading of
the target Markdown file (GitHub's anchor rules). Prints each broken
link; exit status 1 if there is one.
Usage: python3 scripts/check_links.py [FILE.md...]
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LINK = re.compile(r"(?<!\!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(\s*([^)\s]+)[^)]*\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def default_files():
    files = [ROOT / "README.md"]
    files += sorted((ROOT / "docs").rglob("*.md"))
    files += sorted((ROOT / "bench").glob("*.md"))
    files += sorted((ROOT / "bench" / "history").glob("*.md"))
    return [f for f in files if f.exists()]


def anchors(md):
    """GitHub's heading anchors of a Markdown file."""
    found, seen, fenced = set(), {}, False
    for line in md.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if fenced or not m:
            continue
        text = re.sub(r"\{#([^}]*)\}$", "", m.group(1)).strip()
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
        explicit = re.search(r"\{#([^}]*)\}$", m.group(1))
        if explicit:
            found.add(explicit.group(1))
    return found


def links(md):
    fenced = False
    for lineno, line in enumerate(md.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        line = re.sub(r"`[^`]*`", "", line)  # code spans are not links
        for m in list(LINK.finditer(line)) + list(IMAGE.finditer(line)):
            yield lineno, m.group(1)


def check(md):
    errors = []
    for lineno, target in links(md):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        path, _, fragment = target.partition("#")
        dest = (md.parent / path).resolve() if path else md
        where = f"{md.relative_to(ROOT)}:{lineno}: ({target})"
        try:
            dest.relative_to(ROOT)
        except ValueError:
            errors.append(f"{where} points outside the repository")
            continue
        if not dest.exists():
            errors.append(f"{where} names a file that does not exist")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            errors.append(f"{where} names no heading of {dest.relative_to(ROOT)}")
    return errors


def main(argv):
    files = [pathlib.Path(a).resolve() for a in argv] or default_files()
    errors = [e for f in files for e in check(f)]
    for e in errors:
        print(e)
    print(f"check_links: {len(files)} files, {len(errors)} broken link(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
