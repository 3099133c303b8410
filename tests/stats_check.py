# SPDX-License-Identifier: MIT
"""Checks primalloc's reports against a known workload (stats_report.c).

Usage: stats_check.py json|table|xml STATS_REPORT
       stats_check.py exit LIBRARY      (the report at exit, on /bin/ls)
Exits non-zero with a message on the first check that fails."""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

OBJECTS, HUGE, CACHED = 1000, 3, 100


def check(cond, what):
    if not cond:
        sys.exit("check failed: " + what)


# The emulator a cross build's programs run under (ctest's
# CMAKE_CROSSCOMPILING_EMULATOR, passed as PM_EMULATOR), or none.
EMULATOR = os.environ.get("PM_EMULATOR", "").split()


def run(cmd, env=None):
    p = subprocess.run(EMULATOR + cmd, capture_output=True, text=True, env=env, timeout=120)
    check(p.returncode == 0, f"{cmd} exited {p.returncode}: {p.stderr}")
    return p


def sizes(stdout):
    m = re.search(r"^sizes (\d+) (\d+)$", stdout, re.M)
    check(m is not None, "no sizes line in " + repr(stdout))
    return int(m.group(1)), int(m.group(2))


def consistent(doc, name):
    """What holds in any report: the totals add up from the bins."""
    b = doc["bytes"]
    in_bins = sum(x["in_use"] * x["size"] for x in doc["bins"])
    check(b["allocated"] == in_bins + b["huge"], f"{name}: allocated {b['allocated']} != bins {in_bins} + huge {b['huge']}")
    check(b["committed"] == b["active"] + b["dirty"], f"{name}: committed != active + dirty")
    check(b["allocated"] <= b["active"] <= b["peak_active"], f"{name}: allocated <= active <= peak_active")
    check(b["pooled"] <= b["mapped"] <= b["peak_mapped"], f"{name}: pooled <= mapped <= peak_mapped")
    check(b["metadata"] > 0, f"{name}: no metadata")
    for x in doc["bins"]:
        check(x["folios_in_use"] <= x["folios"], f"{name}: bin {x['bin']} uses more folios than it has")
        check(x["dirty"] <= x["committed"], f"{name}: bin {x['bin']} more dirty than committed")


def bin_of(doc, size):
    """The bin of that size, or zeros where the report has no such bin."""
    for x in doc["bins"]:
        if x["size"] == size:
            return x
    return {"in_use": 0, "cached": {"thread": 0, "cpu": 0, "global": 0}}


def check_json(prog):
    with tempfile.TemporaryDirectory() as d:
        paths = [os.path.join(d, n + ".json") for n in ("before", "during", "after")]
        out = run([prog, "json"] + paths).stdout
        docs = []
        for path in paths:
            with open(path) as f:
                docs.append(json.load(f))
    obj, small = sizes(out)
    before, during, after = docs
    for name, doc in zip(("before", "during", "after"), docs):
        consistent(doc, name)
        check(doc["pid"] > 0 and doc["allocator"] == "primalloc", name + ": header")
    grew = bin_of(during, obj)["in_use"] - bin_of(before, obj)["in_use"]
    check(grew == OBJECTS, f"{obj}-byte bin: in_use grew by {grew}, not {OBJECTS}")
    kept = bin_of(after, obj)["in_use"] - bin_of(before, obj)["in_use"]
    check(kept == OBJECTS // 2, f"{obj}-byte bin: {kept} in use after freeing half, not {OBJECTS // 2}")
    check(during["huge_objects"] - before["huge_objects"] == HUGE, "huge objects during")
    check(after["huge_objects"] - before["huge_objects"] == HUGE - 1, "huge objects after")
    allocs = during["events"]["huge_allocs"] - before["events"]["huge_allocs"]
    check(allocs == HUGE, f"huge_allocs grew by {allocs}")
    check(during["bytes"]["huge"] - before["bytes"]["huge"] >= HUGE * (3 << 20), "huge bytes")
    check(during["threads"] == 2 and after["threads"] == 1,
          f"threads {during['threads']} during, {after['threads']} after")
    # The other thread's freed objects count as cached by a thread, not in use.
    d, b = bin_of(during, small), bin_of(before, small)
    check(d["cached"]["thread"] >= CACHED, f"{small}-byte bin: {d['cached']['thread']} cached by threads")
    check(d["in_use"] - b["in_use"] <= 2, f"{small}-byte bin: in_use grew by {d['in_use'] - b['in_use']}")
    print(f"json ok: {grew} objects of {obj} bytes, {d['cached']['thread']} of {small} cached")


def check_table(prog):
    p = run([prog, "table"])
    obj, _ = sizes(p.stdout)
    err = p.stderr
    check(re.search(r"^primalloc \S+ statistics: pid \d+, 2 threads with a cache$", err, re.M) is not None,
          "no heading in " + err[:300])
    for name in ("allocated", "active", "dirty", "committed", "metadata", "mapped", "refills", "steals",
                 "folio_purges", "huge_allocs"):
        check(re.search(rf"^  {name} +\d+ ", err, re.M) is not None, f"no {name} line")
    head = re.search(r"^  bin +size +kind +in_use +thread +cpu +global +free .*$", err, re.M)
    check(head is not None, "no bin table heading")
    rows = [line.split() for line in err[head.end():].splitlines() if line.strip()]
    row = [r for r in rows if r[1] == str(obj)]
    check(len(row) == 1, f"no row for the {obj}-byte bin")
    check(int(row[0][3]) >= OBJECTS, f"{obj}-byte bin: in_use {row[0][3]}")
    print(f"table ok: {len(rows)} bins listed")


def check_xml(prog):
    with tempfile.NamedTemporaryFile(suffix=".xml") as f:
        p = run([prog, "xml", f.name])
        copied = f.read().decode()
    text = p.stdout[p.stdout.index("<malloc"):]
    for name, doc in (("stdout", text), ("memstream", copied)):
        root = ET.fromstring(doc)
        check(root.tag == "malloc" and root.get("version") == "1", name + ": root element")
        heap = root.find("heap")
        check(heap is not None and heap.get("nr") == "0", name + ": no heap 0")
        for s in heap.find("sizes"):
            check(int(s.get("from")) <= int(s.get("to")) and int(s.get("count")) > 0, name + ": size element")
        mmap = root.find("total[@type='mmap']")
        check(mmap is not None and int(mmap.get("count")) == HUGE, name + ": mmap count")
        for t in ("current", "max"):
            check(root.find(f"system[@type='{t}']") is not None, f"{name}: no system {t}")
    print("xml ok")


def check_exit(lib):
    ls = ["/bin/ls", "-l", os.path.dirname(os.path.abspath(__file__))]
    ref = run(ls)
    env = dict(os.environ, LD_PRELOAD=lib, PRIMALLOC_STATS="table")
    p = run(ls, env)
    check(p.stdout == ref.stdout, "ls printed something else with primalloc")
    check(re.search(r"^primalloc \S+ statistics: pid \d+", p.stderr, re.M) is not None,
          "no table at exit on ls's stderr: " + p.stderr[:300])
    check(re.search(r"^  allocated +[1-9]\d* ", p.stderr, re.M) is not None, "nothing allocated by ls")
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, LD_PRELOAD=lib, PRIMALLOC_STATS_FILE=os.path.join(d, "ls.%p.json"))
        p = run(ls, env)
        check(p.stderr == "", "stderr with PRIMALLOC_STATS_FILE: " + p.stderr)
        files = glob.glob(os.path.join(d, "ls.*.json"))
        check(len(files) == 1 and re.search(r"ls\.\d+\.json$", files[0]), f"report files {files}")
        with open(files[0]) as f:
            doc = json.load(f)
        consistent(doc, "ls")
        check(os.path.basename(files[0]) == f"ls.{doc['pid']}.json", "file name is not the pid's")
        check(doc["events"]["refills"] > 0, "ls refilled no thread list")
    env = dict(os.environ, LD_PRELOAD=lib, PRIMALLOC_STATS="tabel")
    p = run(ls, env)
    check(p.stderr == "primalloc: PRIMALLOC_STATS=tabel: not one of none, table, json; using none\n",
          "wrong PRIMALLOC_STATS: " + p.stderr[:300])
    env = dict(os.environ, LD_PRELOAD=lib, PRIMALLOC_STATS="table", PRIMALLOC_GUARD_RATE="1000")
    p = run(ls, env)
    check(re.search(r"^settings\n(  PRIMALLOC_\w+ +\S*\n){9}", p.stderr, re.M) is not None and
          re.search(r"^  PRIMALLOC_GUARD_RATE +1000$", p.stderr, re.M) is not None,
          "no settings in the table: " + p.stderr[:1500])
    check_settings(lib, ls)
    print("report at exit ok")


def check_settings(lib, cmd):
    """Each setting with a good value is in force in the report at exit,
    and with a bad value gives one line naming it and keeps the default."""
    import signal
    with tempfile.TemporaryDirectory() as d:
        report = os.path.join(d, "report.json")
        prof = os.path.join(d, "prof")
        cases = [  # variable, good value, as reported, bad value, default as reported
            ("PRIMALLOC_STATS", "json", "json", "tabel", "none"),
            ("PRIMALLOC_GUARD_RATE", "1000", 1000, "x", 0),
            ("PRIMALLOC_PURGE_THREAD", "1", 1, "2", 0),
            ("PRIMALLOC_HUGE_PAGES", "never", "never", "sometimes", "dense"),
            ("PRIMALLOC_PROF", "1", 1, "on", 0),
            ("PRIMALLOC_PROF_RATE", "100000", 100000, "0", 524288),
            ("PRIMALLOC_PROF_FILE", prof, prof, "p" * 4096, "primalloc"),
            ("PRIMALLOC_PROF_SIGNAL", "USR2", int(signal.SIGUSR2), "NOPE", 0),
            ("PRIMALLOC_LEAKS", "1", 1, "yes", 0),
            ("PRIMALLOC_VERBOSE", "1", 1, "2", 0),
        ]
        for name, good, shown, wrong, default in cases:
            for value, want in ((good, shown), (wrong, default)):
                env = {k: v for k, v in os.environ.items() if not k.startswith("PRIMALLOC_")}
                env.update(LD_PRELOAD=lib, PRIMALLOC_STATS_FILE=report, PRIMALLOC_PROF_FILE=prof)
                env[name] = value
                p = run(cmd, env)
                with open(report) as f:
                    doc = json.load(f)
                got = doc["settings"]
                check(sorted(got) == sorted(n for n, *_ in cases + [("PRIMALLOC_STATS_FILE",)]),
                      f"settings in the report: {sorted(got)}")
                check(got[name] == want, f"{name}={value[:40]}: report says {got[name]!r}, not {want!r}")
                check(got["PRIMALLOC_STATS_FILE"] == report, "the report's own path")
                lines = p.stderr.splitlines()
                if value is wrong:
                    check(len(lines) == 1 and lines[0].startswith(f"primalloc: {name}={value[:40]}") and
                          lines[0].endswith(f"; using {default}"), f"{name}={value[:40]}: stderr {p.stderr[:300]!r}")
                elif name == "PRIMALLOC_VERBOSE":
                    check(len(lines) == len(got) and all(l.startswith("primalloc: PRIMALLOC_") for l in lines),
                          "PRIMALLOC_VERBOSE=1 listed " + p.stderr[:300])
                elif name == "PRIMALLOC_LEAKS":
                    check(lines and all(l.startswith("primalloc: leak") or l.startswith("primalloc:     ")
                                        for l in lines), "PRIMALLOC_LEAKS=1 wrote " + p.stderr[:300])
                else:
                    check(p.stderr == "", f"{name}={value}: stderr {p.stderr[:300]!r}")


def main():
    check(len(sys.argv) == 3, __doc__)
    {"json": check_json, "table": check_table, "xml": check_xml, "exit": check_exit}[sys.argv[1]](sys.argv[2])


main()
