#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks the words table of docs/DESIGN.md against the code: every word
it defines is used in src/, and no phrase its "never for" column names
(backquoted) appears in src/, include/, tests/, man/, README.md or docs/
outside the table, so that each word keeps the one meaning the table
gives it.  Prints each violation and exits 1 if any."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
design = (root / "docs" / "DESIGN.md").read_text()
section = design.split("## Words", 1)[1].split("\n## ", 1)[0]
rows = [l for l in section.splitlines() if l.startswith("| ") and not l.startswith("| word |")]

sources = sorted(root.glob("src/*.[ch]")) + sorted(root.glob("include/*.h"))
texts = sources + sorted(root.glob("tests/**/*.[ch]")) + sorted(root.glob("tests/**/*.cpp")) + \
    sorted(root.glob("man/*")) + [root / "README.md"] + sorted(root.glob("docs/*.md"))
lines = {f: f.read_text().splitlines() for f in texts}
code = "\n".join("\n".join(lines[f]) for f in sources).lower()

errors = []
for row in rows:
    cells = [c.strip() for c in row.strip("|").split("|")]
    if len(cells) != 3:
        errors.append(f"docs/DESIGN.md: a words row without three cells: {row}")
        continue
    for word in (w.strip() for w in cells[0].split(",")):
        if not re.search(r"\b" + re.escape(word.lower()) + r"(s|es|ed|d)?\b", code.replace("_", " ")):
            errors.append(f"docs/DESIGN.md: '{word}' is defined but src/ never uses it")
    for phrase in re.findall(r"`([^`]+)`", cells[2]):
        for f in texts:
            for n, line in enumerate(lines[f], 1):
                if f.name == "DESIGN.md" and line in rows:
                    continue
                if phrase.lower() in line.lower():
                    errors.append(f"{f.relative_to(root)}:{n}: '{phrase}', which the words table rules out for '{cells[0]}'")
if len(rows) < 10:
    errors.append("docs/DESIGN.md: the words table not found or too short")
for e in errors:
    print(e)
print(f"{len(rows)} words, {len(errors)} violations")
sys.exit(1 if errors else 0)
