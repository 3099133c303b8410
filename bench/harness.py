# SPDX-License-Identifier: MIT
"""Runs every benchmark workload under every allocator and reports.

bench/run.sh calls this with Debian's python3 (standard library only).
Knobs come from the environment (QUICK, ONLY, ALLOCATORS, THREADS, RUNS, COMPARE)
or the matching options; see bench/README.md.  Each run is one process:
its wall time, user and system time and max RSS come from GNU time, its
own metric and self-check from the lines it prints ("metric NAME VALUE
UNIT", "check ok" or "check FAILED ...")."""
import argparse
import csv
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import report

BENCH = os.path.dirname(os.path.abspath(__file__))
LIB = "/usr/lib/x86_64-linux-gnu/"
# The peers as Debian installs them; tbbmalloc replaces malloc only
# through its proxy library.
PEERS = {
    "glibc": None,
    "jemalloc": LIB + "libjemalloc.so.2",
    "tcmalloc": LIB + "libtcmalloc_minimal.so.4",
    "mimalloc": LIB + "libmimalloc.so.2",
    "tbbmalloc": LIB + "libtbbmalloc_proxy.so.2",
}
MODES = ("full", "quick", "tiny")
# microbench keeps this many objects live, each free the object allocated
# WINDOW pairs before: a fast path that only works when the same object
# comes straight back would show up.
WINDOW = 64


class Workload:
    """A program and its arguments at each size (full, quick, tiny).
    threaded: it takes threads=N and is run at every thread count.
    more_threads: thread counts it also runs at by default.
    variants: further cells, each a name and extra arguments.
    script: a shell script that preloads the allocator itself, into only
    the program under test, from BENCH_PRELOAD."""

    def __init__(self, name, cmd, sizes, threaded=False, variants=None,
                 script=False, env=None, source="", more_threads=()):
        self.name, self.cmd, self.sizes = name, cmd, sizes
        self.threaded, self.script, self.env = threaded, script, env or {}
        self.more_threads = more_threads
        self.variants = variants or [("", "")]
        self.source = source


def c(prog, fixed=""):
    return ["{build}/bench/" + prog] + fixed.split()


WORKLOADS = [
    Workload("malloc-test", c("malloc_test", "mode=original"),
             ("objects=6000000", "objects=50000", "objects=2000"), threaded=True),
    Workload("malloc-test-batched", c("malloc_test", "mode=batched"),
             ("objects=15000000", "objects=200000", "objects=8192"), threaded=True,
             more_threads=(4,)),
    Workload("threadtest", c("threadtest", "size=64"),
             ("objects=100000 rounds=240", "objects=20000 rounds=30", "objects=1000 rounds=3"),
             threaded=True),
    Workload("larson", c("larson", "min=7 max=500 slots=1000"),
             ("rounds=450000 gens=20", "rounds=10000 gens=10", "rounds=500 gens=3"),
             threaded=True),
    Workload("shbench", c("shbench", "min=1 max=1000 remote=0"),
             ("iters=800000", "iters=15000", "iters=300"), threaded=True),
    Workload("shbench-remote", c("shbench", "min=1 max=1000 remote=1"),
             ("iters=300000", "iters=8000", "iters=300"), threaded=True),
    Workload("xmalloc", c("xmalloc", "min=8 max=1024 batch=64"),
             ("objects=7200000", "objects=150000", "objects=2000"), threaded=True),
    Workload("cache-thrash", c("false_sharing", "mode=active size=8"),
             ("iters=12000 writes=5000", "iters=500 writes=2000", "iters=20 writes=100"),
             threaded=True),
    Workload("cache-scratch", c("false_sharing", "mode=passive size=8"),
             ("iters=12000 writes=5000", "iters=500 writes=2000", "iters=20 writes=100"),
             threaded=True),
    Workload("vyukov", c("vyukov_chain", "max=4096"),
             ("threads=200 objects=10000", "threads=100 objects=5000",
              "threads=20 objects=500")),
    Workload("thread-churn", c("thread_churn", "threads=2 ops=4000 window=256 min=8 max=256"),
             ("rounds=4000", "rounds=400", "rounds=20")),
    Workload("superserver", c("superserver", "kmin=4 kmax=20 life=1000"),
             ("objects=1800000", "objects=150000", "objects=3000"), threaded=True),
    Workload("mstress", c("mstress", "maxlog=14"),
             ("phases=10 iters=600000", "phases=5 iters=30000", "phases=3 iters=500"),
             threaded=True),
    Workload("alloc-test", c("alloc_test", "max=1024 slots=16384"),
             ("ops=15000000", "ops=400000", "ops=5000"), threaded=True),
    Workload("t-test1", c("ttest", "max=10000"),
             ("actions=20000000", "actions=1000000", "actions=20000"), threaded=True),
    Workload("glibc-simple", c("glibc_simple", "size=16"),
             ("pairs=1000000", "pairs=50000", "pairs=3200")),
    Workload("glibc-thread", c("glibc_thread", "slots=1024"),
             ("steps=20000000", "steps=1000000", "steps=20000"), threaded=True),
    Workload("rptest", c("rptest", "slots=1000 ops=100 cross=2 min=8 max=16000"),
             ("loops=200000", "loops=10000", "loops=400"), threaded=True),
    Workload("malloc-large", c("malloc_large", "min=5m max=25m"),
             ("ops=225", "ops=40", "ops=5")),
    Workload("phases", c("phases"), ("bytes=512m", "bytes=64m", "bytes=1m")),
    Workload("microbench", c("microbench", "window=%d" % WINDOW),
             ("pairs=40000000", "pairs=4000000", "pairs=10000"),
             variants=[(str(s), "size=%d" % s) for s in
                       (16, 64, 256, 1024, 4096, 16384, 65536)] + [("mixed", "size=0")]),
    # The same pairs through C++'s new and sized delete.
    Workload("microbench-cxx", c("microbench_cxx", "window=%d" % WINDOW),
             ("pairs=40000000", "pairs=4000000", "pairs=10000"),
             variants=[(str(s), "size=%d" % s) for s in (16, 256)]),
    Workload("python3", ["/usr/bin/python3", BENCH + "/real/alloc_heavy.py"],
             ("12", "4", "1"), env={"PYTHONMALLOC": "malloc"}),
    Workload("perl", ["perl", BENCH + "/real/words.pl"], ("6", "2", "1")),
    Workload("sqlite3", ["bash", BENCH + "/real/sqlite_load.sh"],
             ("120000", "30000", "2000"), script=True),
    # A large heap: about a gigabyte of rows of up to 6 KB, indexed.
    Workload("sqlite3-large", ["bash", BENCH + "/real/sqlite_load.sh"],
             ("300000 6000", "60000 6000", "2000 6000"), script=True),
    Workload("redis", ["bash", BENCH + "/real/redis.sh"],
             ("25000", "6000", "300"), script=True),
]
# Each column of the callgrind table: its heading, microbench's build
# (plain C, or C++'s operators) and the size.
CALLGRIND_COLUMNS = [("%d B" % s, "microbench", s) for s in (16, 64, 256, 1024)] + \
    [("16 B new", "microbench_cxx", 16)]
BASELINE = "loop alone"
CALLGRIND_PAIRS = {"full": 200000, "quick": 100000, "tiny": 2000}


class Cell:
    """One row of the tables: a workload at one thread count / variant."""

    def __init__(self, w, threads, variant):
        self.workload, self.threads = w, threads
        suffix, self.extra = variant
        self.id = w.name + ("/t%d" % threads if threads else "") + \
            ("/" + suffix if suffix else "")

    def command(self, mode, build):
        args = [a.format(build=build) for a in self.workload.cmd]
        args += self.workload.sizes[MODES.index(mode)].split() + self.extra.split()
        if self.threads:
            args.append("threads=%d" % self.threads)
        return args


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    env = os.environ.get
    p.add_argument("--build", default="build")
    p.add_argument("--quick", action="store_true", default=env("QUICK", "0") not in ("", "0"))
    p.add_argument("--test", action="store_true",
                   help="tiny sizes, one run, no report; exit 1 unless all pass")
    p.add_argument("--only", default=env("ONLY", ""))
    p.add_argument("--allocators", default=env("ALLOCATORS", ""))
    p.add_argument("--threads", default=env("THREADS", ""))
    p.add_argument("--runs", type=int, default=int(env("RUNS", "0")))
    p.add_argument("--primalloc", help="the library (default BUILD/libprimalloc.so)")
    p.add_argument("--compare", default=env("COMPARE", ""),
                   help="more allocators as NAME=LIBRARY[:VAR=VALUE...],... (an older "
                   "primalloc, say); each VAR=VALUE is set for that allocator's runs only")
    p.add_argument("--list", action="store_true", help="print the workload names")
    return p.parse_args()


def words(s):
    return [x for x in re.split(r"[,\s]+", s) if x]


def select_cells(opts, mode):
    only = words(opts.only)
    known = [w.name for w in WORKLOADS] + ["callgrind"]
    for name in only:
        if name not in known:
            sys.exit("unknown workload %r; known: %s" % (name, " ".join(known)))
    chosen = [int(t) for t in words(opts.threads)]
    threads = chosen or ([1, 3] if mode == "tiny" else [1, 2, 8, 32])
    cells = []
    for w in WORKLOADS:
        if only and w.name not in only:
            continue
        counts = threads if chosen or mode == "tiny" else sorted(set(threads) | set(w.more_threads))
        for t in (counts if w.threaded else [0]):
            for v in w.variants:
                cells.append(Cell(w, t, v))
    return cells, (not only or "callgrind" in only)


def select_allocators(opts):
    """[(name, library)] in the order to report them, and {name: {VAR:
    VALUE}}, the settings COMPARE gives an allocator's runs alone: Google's
    tcmalloc wants GLIBC_TUNABLES=glibc.pthread.rseq=0 on some glibc
    versions, which, set for every run, would take rseq from the others."""
    lib = opts.primalloc or os.path.join(opts.build, "libprimalloc.so")
    table = {"primalloc": lib, "primalloc-fast": os.path.join(opts.build, "libprimalloc-fast.so"), **PEERS}
    envs = {}
    for entry in words(opts.compare):
        name, _, rest = entry.partition("=")
        path, *settings = rest.split(":")
        if not path or any("=" not in v or v.startswith("=") for v in settings):
            sys.exit("COMPARE takes NAME=LIBRARY[:VAR=VALUE...], not %r" % entry)
        table[name] = os.path.abspath(path)
        envs[name] = dict(v.split("=", 1) for v in settings)
    names = words(opts.allocators) or list(table)
    for n in names:
        if n not in table:
            sys.exit("unknown allocator %r; known: %s" % (n, " ".join(table)))
    return [(n, table[n]) for n in names], envs


def run_once(cmd, env, timeout):
    """Runs cmd in its own session; returns a result dict.  GNU time forks
    the run: the max RSS of a child forked straight from Python would
    count Python's own memory, which the child held until its exec."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as usage:
        t0 = time.monotonic()
        p = subprocess.Popen(["/usr/bin/time", "-o", usage.name, "-f", "%U %S %M", "--"] + cmd,
                             stdout=out, stderr=err, env=env, start_new_session=True)
        timed_out = []

        def kill():
            timed_out.append(True)
            os.killpg(p.pid, signal.SIGKILL)
        timer = threading.Timer(timeout, kill)
        timer.start()
        p.wait()
        wall = time.monotonic() - t0
        timer.cancel()
        try:  # anything the run left behind (a server) goes with it
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
        report_lines = usage.read().splitlines()
    user, sys_, rss = (float(x) for x in report_lines[-1].split()) \
        if report_lines and len(report_lines[-1].split()) == 3 else (0.0, 0.0, 0.0)
    died = re.search(r"terminated by signal (\d+)", "\n".join(report_lines))
    metrics = {}
    for m in re.finditer(r"^metric (\S+) (\S+) (\S+)$", stdout, re.M):
        metrics[m.group(1)] = (float(m.group(2)), m.group(3))
    code = p.returncode
    if timed_out:
        state = "TIMEOUT"
    elif died:
        state = "CRASH(signal %s)" % died.group(1)
    elif re.search(r"^check FAILED", stdout, re.M):
        state = "FAILED"
    elif code != 0:
        state = "CRASH(exit %d)" % code
    elif not re.search(r"^check ok", stdout, re.M):
        state = "FAILED(no check)"
    else:
        state = "ok"
    return dict(status=state, exit=code, wall=wall, user=user, sys=sys_, maxrss_kib=rss,
                metrics=metrics, stdout=stdout, stderr=stderr)


def launch(cmd, cell_env, preload, script, alloc_env):
    """The command and environment for one run.  The preload and the
    allocator's own settings (alloc_env) are set by env after GNU time, so
    that only the workload runs under the allocator (a script passes
    BENCH_PRELOAD on to its program under test, and the settings reach
    the whole script)."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.update(cell_env)
    if preload and script:
        env["BENCH_PRELOAD"] = preload
        env.update(alloc_env)
    elif preload:
        cmd = ["env", "LD_PRELOAD=" + preload] + ["%s=%s" % kv for kv in alloc_env.items()] + cmd
    return cmd, env


def fmt_time(s):
    s = int(s)
    return "%dm%02ds" % (s // 60, s % 60) if s >= 60 else "%ds" % s


class Progress:
    def __init__(self, total):
        self.total, self.done, self.start = total, 0, time.monotonic()

    def step(self, label, result):
        self.done += 1
        spent = time.monotonic() - self.start
        left = spent / self.done * (self.total - self.done)
        print("[%4d/%d] %-28s %-6.3gs %-18s elapsed %s, about %s left" % (
            self.done, self.total, label, result["wall"], result["status"],
            fmt_time(spent), fmt_time(left)), flush=True)
        if result["status"] != "ok":
            tail = (result["stdout"] + result["stderr"]).strip().splitlines()[-6:]
            for line in tail:
                print("        | " + line[:200], flush=True)


CSV_FIELDS = ["cell", "workload", "threads", "allocator", "run", "status", "exit",
              "wall_s", "user_s", "sys_s", "maxrss_kib", "metrics"]


def main():
    opts = parse_args()
    if opts.list:
        print(" ".join([w.name for w in WORKLOADS] + ["callgrind"]))
        return 0
    mode = "tiny" if opts.test else "quick" if opts.quick else "full"
    runs = opts.runs or (1 if mode != "full" else 3)
    build = os.path.abspath(opts.build)
    cells, with_callgrind = select_cells(opts, mode)
    allocs, envs = select_allocators(opts)
    present = [(n, lib) for n, lib in allocs if lib is None or os.path.exists(lib)]
    missing = [n for n, lib in allocs if (n, lib) not in present]
    for n in missing:
        print("allocator %s is missing (%s); its cells are reported MISSING" %
              (n, dict(allocs)[n]))
    timeout = {"full": 300, "quick": 120, "tiny": 120}[mode]

    # A run that a knob narrows or changes reports apart, so that it never
    # overwrites the full comparison of a plain `make bench`.
    tuned = opts.quick or opts.only or opts.allocators or opts.threads or opts.runs or \
        opts.compare or opts.primalloc
    outdir = os.path.join(build, "bench", "subset") if tuned else os.path.join(build, "bench")
    os.makedirs(outdir, exist_ok=True)
    results = []
    csv_file = None
    if not opts.test:
        csv_file = open(os.path.join(outdir, "results.csv"), "w", newline="")
        writer = csv.DictWriter(csv_file, CSV_FIELDS)
        writer.writeheader()

    cg_runs = len(CALLGRIND_COLUMNS) * 2 * (len(present) + 1) if with_callgrind else 0
    progress = Progress(len(cells) * runs * len(present) + cg_runs)
    print("%s mode: %d cells x %d allocators x %d runs, plus %d callgrind runs" % (
        mode, len(cells), len(present), runs, cg_runs), flush=True)
    for cell in cells:
        # Allocators alternate run by run, so drift hits them all alike,
        # in an order shuffled for each run (the same in every make bench):
        # a run right after one that touched much memory can wait for the
        # kernel (or the hypervisor under it) to supply pages again, and
        # in a fixed or rotated order one allocator always follows the
        # same one.
        for run in range(runs):
            order = list(present)
            random.Random(run).shuffle(order)
            for name, lib in order:
                r = run_once(*launch(cell.command(mode, build), cell.workload.env, lib,
                                     cell.workload.script, envs.get(name, {})), timeout)
                r.update(cell=cell, allocator=name, run=run)
                results.append(r)
                progress.step("%s %s #%d" % (cell.id, name, run + 1), r)
                if csv_file:
                    writer.writerow(dict(
                        cell=cell.id, workload=cell.workload.name, threads=cell.threads,
                        allocator=name, run=run + 1, status=r["status"], exit=r["exit"],
                        wall_s="%.4f" % r["wall"], user_s="%.4f" % r["user"],
                        sys_s="%.4f" % r["sys"], maxrss_kib=r["maxrss_kib"],
                        metrics=";".join("%s=%g" % (k, v[0]) for k, v in r["metrics"].items())))
                    csv_file.flush()
    callgrind = run_callgrind(mode, build, present, envs, progress) if with_callgrind else {}
    if csv_file:
        csv_file.close()

    bad = [r for r in results if r["status"] != "ok"] + \
        [v for v in callgrind.values() if isinstance(v, str)]
    if opts.test:
        if missing:
            print("FAILED: missing allocator library: " + " ".join(missing))
        return 1 if bad or missing else 0
    report.write(outdir, mode, runs, cells, allocs, missing, results, callgrind, BASELINE)
    print("wrote %s/results.csv, results.md and plots" % outdir)
    return 0


def run_callgrind(mode, build, allocs, envs, progress):
    """Instructions per malloc+free pair: runs of N and 2N pairs under
    callgrind (which, unlike memcheck, leaves malloc to the preloaded
    allocator); the difference divided by N leaves out start-up and exit,
    and the same for the loop without malloc and free (BASELINE) leaves
    out the loop.  Returns {(allocator, heading): instructions or an error
    string}, with the loop's own count under (BASELINE, heading)."""
    out = {}
    if not shutil.which("valgrind"):
        return {(n, h): "no valgrind" for n, _ in allocs for h, _, _ in CALLGRIND_COLUMNS}
    n = CALLGRIND_PAIRS[mode]
    for heading, prog, size in CALLGRIND_COLUMNS:
        counts = {}
        for pairs in (n, 2 * n):
            for name, lib in [(BASELINE, None)] + allocs:
                cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                       build + "/bench/" + prog, "size=%d" % size, "pairs=%d" % pairs,
                       "window=%d" % WINDOW,
                       "baseline=%d" % (name == BASELINE)]
                r = run_once(*launch(cmd, {}, lib, False, envs.get(name, {})), 600)
                m = re.search(r"Collected : (\d+)", r["stderr"])
                if r["status"] == "ok" and not m:
                    r["status"] = "FAILED(no count)"
                progress.step("callgrind/%s/%d %s" % (heading, pairs, name), r)
                counts.setdefault(name, []).append(int(m.group(1)) if m else r["status"])
        for name, (a, b) in counts.items():
            # A run that died before its loop (snmalloc cannot start under
            # valgrind) counts as much at 2N pairs as at N.
            if isinstance(a, int) and isinstance(b, int):
                out[(name, heading)] = (b - a) / n if b > a else "FAILED(no loop ran)"
            else:
                out[(name, heading)] = a if isinstance(a, str) else b
        loop = out[(BASELINE, heading)]
        for name, _ in allocs:
            if isinstance(out[(name, heading)], float) and isinstance(loop, float):
                out[(name, heading)] -= loop
    return out


if __name__ == "__main__":
    sys.exit(main())
