#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks that the modules of src/ and include/ point only down: every
#include "..." names a file of the including file's row, or of a row above
it, in the table of README.md's Layout section; every file of src/ and
include/ is in the table.  Prints each violation and exits 1 if any."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
readme = (root / "README.md").read_text()
section = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]

rank = {}
for row, line in enumerate(l for l in section.splitlines() if l.startswith("| `")):
    first = line.split("|")[1]
    for name in re.findall(r"`([^`]+)`", first):
        m = re.fullmatch(r"(.*)\.\[(\w+)\]", name)
        for path in ([m.group(1) + "." + e for e in m.group(2)] if m else [name]):
            rank[pathlib.PurePath(path).name] = (row, path)

errors = []
files = sorted(root.glob("src/*.[ch]")) + sorted(root.glob("include/*.h"))
for f in files:
    if f.name not in rank:
        errors.append(f"{f.relative_to(root)}: not in README's layout table")
        continue
    own = rank[f.name][0]
    for n, line in enumerate(f.read_text().splitlines(), 1):
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if not m:
            continue
        target = pathlib.PurePath(m.group(1)).name
        if target not in rank:
            errors.append(f"{f.relative_to(root)}:{n}: includes {target}, not in the layout table")
        elif rank[target][0] > own:
            errors.append(f"{f.relative_to(root)}:{n}: includes {rank[target][1]}, a layer above it")
if len(rank) < 10 or not files:
    errors.append("README's layout table not found or too short")
for e in errors:
    print(e)
print(f"{len(files)} files, {len(errors)} violations")
sys.exit(1 if errors else 0)
