# SPDX-License-Identifier: MIT
"""Allocation-heavy Python: binary trees, dictionaries of strings, string
building and sorting.  Run with PYTHONMALLOC=malloc so every object goes
through the allocator under test rather than Python's own small-object
pool.  Usage: alloc_heavy.py SCALE.  Each result is checked against a
value known in closed form."""
import sys
import time


def tree(depth):
    return (tree(depth - 1), tree(depth - 1)) if depth else (None, None)


def count(node):
    left, right = node
    return 1 if left is None else 1 + count(left) + count(right)


def main():
    scale = int(sys.argv[1])
    problems = []
    start = time.monotonic()

    depth = 14
    keep = tree(depth)
    for i in range(scale):
        if count(tree(depth - 2 + i % 3)) != 2 ** (depth - 1 + i % 3) - 1:
            problems.append("tree %d has the wrong node count" % i)

    d = {}
    n = 20000 * scale
    for i in range(n):
        d["key-%d-%s" % (i, "x" * (i % 50))] = [i, str(i)]
    for i in range(0, n, 2):
        del d["key-%d-%s" % (i, "x" * (i % 50))]
    if len(d) != n // 2 or sum(v[0] for v in d.values()) != sum(range(1, n, 2)):
        problems.append("dictionary lost entries")

    # 7919 is a prime that does not divide n, so this is a permutation.
    text = " ".join(sorted(str(i * 7919 % n) for i in range(n)))
    if sorted(map(int, text.split())) != list(range(n)):
        problems.append("text lost words")

    if count(keep) != 2 ** (depth + 1) - 1:
        problems.append("the long-lived tree changed")
    print("metric seconds %.6g s" % (time.monotonic() - start))
    if problems:
        print("check FAILED " + "; ".join(problems))
        return 1
    print("check ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
