# SPDX-License-Identifier: MIT
"""An allocation-heavy Python workload whose output depends only on its
fixed seeds: run with PYTHONMALLOC=malloc so that every object comes from
the C allocator under test, and compare the output with a plain run."""
import gc
import hashlib
import json
import random
import threading
import zlib

rng = random.Random(20240601)


def dicts_and_strings():
    d = {}
    for i in range(80000):
        d["k%d" % rng.randrange(10**9)] = (i, str(i) * (i % 7), [i] * (i % 5))
    for k in list(d)[::2]:
        del d[k]
    for i in range(40000):
        d[("t", i)] = {"x": i, "y": "v" * (i % 50)}
    return sum(len(str(v)) for v in d.values())


def big_numbers():
    f = 1
    for i in range(2, 4000):
        f *= i
    return sum(int(c, 16) for c in hex(f)[2:]) + (f % 1000003) + (f // 10**3000) % 99991


def growing_buffers():
    b = bytearray()
    s = []
    for i in range(30000):
        b += bytes([i % 251]) * (i % 400)
        s.append(chr(65 + i % 26) * (i % 30))
    joined = "".join(s)
    return hashlib.sha256(b).hexdigest()[:16], len(joined), zlib.crc32(joined.encode())


def json_roundtrip():
    doc = [{"id": i, "tags": [str(j) for j in range(i % 20)], "w": i * 0.5}
           for i in range(30000)]
    text = json.dumps(doc, sort_keys=True)
    back = json.loads(text)
    return len(text), back == doc


def sorting():
    xs = [rng.random() for _ in range(300000)]
    ys = sorted(xs)
    words = sorted(("%x" % rng.getrandbits(40)) for _ in range(100000))
    return round(ys[len(ys) // 2], 6), words[0], words[-1]


def cycles():
    class Node:
        def __init__(self, i):
            self.i = i
            self.peer = None
            self.data = [i] * 10
    for _ in range(20):
        nodes = [Node(i) for i in range(5000)]
        for a, b in zip(nodes, nodes[1:] + nodes[:1]):
            a.peer = b
        del nodes
    return gc.collect() >= 0


def threads():
    results = [None] * 8

    def work(k):
        r = random.Random(k)
        acc = []
        for i in range(20000):
            acc.append({"n": r.randrange(1000), "s": "x" * r.randrange(100)})
            if len(acc) > 500:
                acc = acc[250:]
        results[k] = sum(x["n"] + len(x["s"]) for x in acc)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return results


for name, fn in [("dicts", dicts_and_strings), ("bignum", big_numbers),
                 ("buffers", growing_buffers), ("json", json_roundtrip),
                 ("sorting", sorting), ("cycles", cycles), ("threads", threads)]:
    print(name, fn())
