# SPDX-License-Identifier: MIT
"""The noise floor of bench/report.py reads the spread between runs and
nothing else: 1.0 when runs repeat exactly, above it when they scatter,
and the same whatever the allocators' real differences.
Usage: noise_floor_test.py (exit 1 on a failure)."""
import os
import sys
from types import SimpleNamespace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402

failures = []


def summary(walls):
    """walls: {allocator: [wall of each run]}, one cell."""
    cell = SimpleNamespace(id="w/1")
    results = [{"cell": cell, "allocator": a, "status": "ok", "wall": w, "user": w, "sys": 0.0,
                "maxrss_kib": 1000.0, "metrics": {}} for a, ws in walls.items() for w in ws]
    return report.Summary([cell], [(a, None) for a in walls], set(), results)


def expect(what, ok):
    if not ok:
        failures.append(what)


exact = summary({"a": [1.0] * 5, "b": [2.0] * 5, "c": [3.0] * 5})
expect("runs that repeat give 1.0", exact.noise_floor("wall") == 1.0)
expect("equal RSS gives 1.0", exact.noise_floor("maxrss_kib") == 1.0)

scatter = [0.8, 0.9, 1.0, 1.1, 1.3]
alike = summary({"a": scatter, "b": scatter, "c": scatter})
floor = alike.noise_floor("wall")
expect("scattered runs give more than 1.0 (%.4f)" % floor, floor > 1.01)
apart = summary({"a": scatter, "b": [2 * w for w in scatter], "c": [3 * w for w in scatter]})
expect("the allocators' differences do not count (%.4f against %.4f)" %
       (apart.noise_floor("wall"), floor), apart.noise_floor("wall") == floor)
wider = summary({a: [0.5, 0.75, 1.0, 1.5, 2.0] for a in "abc"})
expect("a wider spread gives a higher floor", wider.noise_floor("wall") > floor)

for f in failures:
    print("FAILED:", f)
sys.exit(1 if failures else 0)
