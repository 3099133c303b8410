# SPDX-License-Identifier: MIT
"""Writes results.md and the plots from the runs bench/harness.py made."""
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import time

PACKAGES = {"jemalloc": "libjemalloc2", "tcmalloc": "libtcmalloc-minimal4",
            "mimalloc": "libmimalloc2.0", "tbbmalloc": "libtbbmalloc2"}


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


class Summary:
    """Per (cell, allocator): the state shown in the tables and, when every
    run passed, the medians."""

    def __init__(self, cells, allocs, missing, results):
        self.cells, self.allocs = cells, [n for n, _ in allocs]
        by = {}
        for r in results:
            by.setdefault((r["cell"].id, r["allocator"]), []).append(r)
        self.state, self.med, self.metric, self.runs = {}, {}, {}, {}
        for cell in cells:
            for a in self.allocs:
                runs = by.get((cell.id, a), [])
                failed = [r for r in runs if r["status"] != "ok"]
                key = (cell.id, a)
                if a in missing:
                    self.state[key] = "MISSING"
                elif failed:
                    self.state[key] = "%s %d/%d" % (failed[0]["status"], len(failed), len(runs))
                elif runs:
                    self.state[key] = "ok"
                    self.runs[key] = {f: [r[f] for r in runs]
                                      for f in ("wall", "user", "sys", "maxrss_kib")}
                    self.med[key] = {f: statistics.median(v) for f, v in self.runs[key].items()}
                    names = runs[0]["metrics"]
                    self.metric[key] = {m: (statistics.median(r["metrics"][m][0] for r in runs
                                                              if m in r["metrics"]),
                                            names[m][1]) for m in names}

    def ratios(self, field):
        """{(cell, allocator): median / best median of that cell}."""
        out = {}
        for cell in self.cells:
            vals = {a: self.med[(cell.id, a)][field] for a in self.allocs
                    if (cell.id, a) in self.med}
            best = min(vals.values(), default=0)
            for a, v in vals.items():
                out[(cell.id, a)] = v / best if best > 0 else 1.0
        return out

    def noise_floor(self, field, draws=400):
        """The geometric mean ratio to best that an allocator no different
        from the others would get from the spread of this run alone: in
        each cell, every allocator's median is drawn from the runs of all
        of them, each divided by its own allocator's median.  1.0 when
        runs repeat exactly; an allocator whose geometric mean is at or
        below the floor differs from the others by no more than the run
        can show."""
        rng = random.Random(1)
        logs = []
        for cell in self.cells:
            keys = [(cell.id, a) for a in self.allocs
                    if (cell.id, a) in self.med and self.med[(cell.id, a)][field] > 0]
            if len(keys) < 2:
                continue
            spread = [v / self.med[k][field] for k in keys for v in self.runs[k][field]]
            n = min(len(self.runs[k][field]) for k in keys)
            total = 0.0
            for _ in range(draws):
                meds = [statistics.median(rng.choices(spread, k=n)) for _ in keys]
                total += math.log(meds[0] / min(meds))
            logs.append(total / draws)
        return math.exp(sum(logs) / len(logs)) if logs else float("nan")


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def cell_table(s, field, scale, fmt):
    ratios = s.ratios(field)
    rows = []
    for cell in s.cells:
        row = [cell.id]
        for a in s.allocs:
            key = (cell.id, a)
            if key in s.med:
                mark = "**" if ratios[key] == 1.0 else ""
                row.append("%s%s%s (%.2f)" % (mark, fmt % (s.med[key][field] / scale), mark,
                                              ratios[key]))
            else:
                row.append(s.state[key])
        rows.append(row)
    return table(["cell"] + s.allocs, rows)


def summary_table(s):
    rows = []
    t, m = s.ratios("wall"), s.ratios("maxrss_kib")
    for a in s.allocs:
        ok = [c.id for c in s.cells if (c.id, a) in t]
        bad = len(s.cells) - len(ok)
        best = sum(1 for c in ok if t[(c, a)] == 1.0)
        rows.append([a, "%.3f" % geomean([t[(c, a)] for c in ok]),
                     "%.3f" % geomean([m[(c, a)] for c in ok]),
                     str(best), "%d/%d" % (len(ok), len(s.cells)) + (" (%d not ok)" % bad
                                                                   if bad else "")])
    rows.append(["noise floor", "%.3f" % s.noise_floor("wall"),
                 "%.3f" % s.noise_floor("maxrss_kib"), "", ""])
    return table(["allocator", "time: geomean ratio to best", "max RSS: geomean ratio to best",
                  "cells fastest", "cells ok"], rows)


def metric_table(s):
    rows = []
    for cell in s.cells:
        first = next((s.metric[(cell.id, a)] for a in s.allocs if (cell.id, a) in s.metric),
                     None)
        if not first:
            continue
        name = next(iter(first))
        row = ["%s" % cell.id, "%s (%s)" % (name, first[name][1])]
        for a in s.allocs:
            m = s.metric.get((cell.id, a), {}).get(name)
            row.append("%.4g" % m[0] if m else s.state[(cell.id, a)])
        rows.append(row)
    return table(["cell", "metric"] + s.allocs, rows)


def latency_table(s):
    rows = []
    fields = ["malloc_p50", "malloc_p99", "malloc_p999", "malloc_max",
              "free_p50", "free_p99", "free_p999", "free_max"]
    for cell in s.cells:
        if cell.workload.name != "superserver":
            continue
        for a in s.allocs:
            m = s.metric.get((cell.id, a))
            if m:
                rows.append([cell.id, a] + ["%.0f" % m[f][0] if f in m else "-" for f in fields])
            else:
                rows.append([cell.id, a] + [s.state[(cell.id, a)]] + [""] * (len(fields) - 1))
    return table(["cell", "allocator"] + [f + " ns" for f in fields], rows) if rows else ""


def callgrind_table(allocs, callgrind, baseline):
    headings = list(dict.fromkeys(h for _, h in callgrind))
    rows = []
    for a in [n for n, _ in allocs] + [baseline]:
        vals = [callgrind.get((a, h)) for h in headings]
        rows.append([a] + ["%.1f" % v if isinstance(v, float) else (v or "-") for v in vals])
    text = table(["allocator"] + headings, rows)
    numbers = {round(v, 1) for (a, _), v in callgrind.items()
               if isinstance(v, float) and a != baseline}
    if len([a for a, _ in allocs]) > 1 and len(numbers) <= 1:
        text += "\n**Warning:** every allocator gave the same count; the preload did not " \
                "take effect under valgrind.\n"
    return text


def plot(outdir, s, cells):
    """Three PNGs with gnuplot: time and RSS ratio per workload (geometric
    mean over the workload's cells), and malloc-test throughput against
    the number of producer threads.  Returns markdown lines."""
    gp = shutil.which("gnuplot")
    if not cells:
        return []
    if not gp:
        return ["(gnuplot is not installed: no plots)"]
    pdir = os.path.join(outdir, "plots")
    os.makedirs(pdir, exist_ok=True)
    workloads = []
    for c in cells:
        if c.workload.name not in workloads:
            workloads.append(c.workload.name)
    n = len(s.allocs)
    md = []
    for field, name, title in (("wall", "time_ratio", "wall time"),
                               ("maxrss_kib", "rss_ratio", "max RSS")):
        ratios = s.ratios(field)
        with open(os.path.join(pdir, name + ".dat"), "w") as f:
            f.write("workload " + " ".join(s.allocs) + "\n")
            for w in workloads:
                vals = []
                for a in s.allocs:
                    rs = [ratios[(c.id, a)] for c in cells
                          if c.workload.name == w and (c.id, a) in ratios]
                    vals.append("%.4f" % geomean(rs) if rs else "NaN")
                f.write(w + " " + " ".join(vals) + "\n")
        script = """set terminal pngcairo size 1400,600 font ",10"
set output '{out}'
set title "{title}: ratio to the best allocator per workload (geometric mean over its cells; lower is better)"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set logscale y 2
set yrange [0.9:*]
set grid ytics
set key top left horizontal
set xtics rotate by -35
plot for [i=2:{last}] '{dat}' using i:xtic(1) title columnheader(i)
""".format(out=os.path.join(pdir, name + ".png"), title=title, last=n + 1,
           dat=os.path.join(pdir, name + ".dat"))
        if run_gnuplot(gp, script):
            md.append("![%s ratio](plots/%s.png)" % (title, name))
    mt = [c for c in cells if c.workload.name in ("malloc-test", "malloc-test-batched")]
    if mt:
        panels = []
        for w in ("malloc-test", "malloc-test-batched"):
            dat = os.path.join(pdir, w + ".dat")
            with open(dat, "w") as f:
                f.write("threads " + " ".join(s.allocs) + "\n")
                for c in mt:
                    if c.workload.name != w:
                        continue
                    row = [s.metric.get((c.id, a), {}).get("mallocs_per_s") for a in s.allocs]
                    f.write("%d " % c.threads + " ".join("%.4g" % (v[0] / 1e6) if v else "NaN"
                                                          for v in row) + "\n")
            panels.append("""set title "{w}"
plot for [i=2:{last}] '{dat}' using 1:i with linespoints lw 2 title columnheader(i)
""".format(w=w, last=n + 1, dat=dat))
        script = """set terminal pngcairo size 1400,550 font ",10"
set output '{out}'
set multiplot layout 1,2 title "malloc-test throughput (higher is better)"
set logscale x 2
set xlabel "producer threads (as many consumers)"
set ylabel "million mallocs per second"
set yrange [0:*]
set grid
set key top left
""".format(out=os.path.join(pdir, "malloc_test.png")) + "".join(panels) + "unset multiplot\n"
        if run_gnuplot(gp, script):
            md.append("![malloc-test throughput](plots/malloc_test.png)")
    return md


def run_gnuplot(gp, script):
    r = subprocess.run([gp], input=script, text=True, capture_output=True)
    if r.returncode != 0:
        print("gnuplot failed: " + r.stderr.strip())
    return r.returncode == 0


def package_version(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True,
                       text=True)
    return r.stdout.strip() if r.returncode == 0 else "?"


def write(outdir, mode, runs, cells, allocs, missing, results, callgrind, baseline):
    s = Summary(cells, allocs, missing, results)
    md = ["# primalloc benchmark results", ""]
    md.append("%s, %s mode, %d run(s) per cell (median shown), %d CPUs, kernel %s." % (
        time.strftime("%Y-%m-%d %H:%M"), mode, runs, os.cpu_count(), platform.release()))
    md.append("")
    md.append("Allocators: " + "; ".join(
        "%s (%s)" % (n, "MISSING" if n in missing else
                     "as linked" if lib is None else
                     "%s %s" % (os.path.basename(lib), package_version(PACKAGES[n]))
                     if n in PACKAGES else lib) for n, lib in allocs) + ".")
    md.append("")
    md.append("Ratios are to the best allocator in the cell (1.00 = best, in **bold**). "
              "A cell that crashed, timed out or failed its self-check shows that and how "
              "many runs did, and is left out of the geometric means. "
              "The noise floor is what an allocator no different from the others would "
              "score, from this run's spread between runs alone (Summary.noise_floor). "
              "Every run is in results.csv; bench/README.md says what each workload is.")
    md += ["", "## Summary", "", summary_table(s)]
    md += plot(outdir, s, cells)
    md += ["", "## Wall time (median seconds, ratio to best)", "",
           cell_table(s, "wall", 1.0, "%.3f")]
    md += ["## Max RSS (median MiB, ratio to best)", "",
           cell_table(s, "maxrss_kib", 1024.0, "%.1f")]
    md += ["## Each workload's own metric (median)", "", metric_table(s)]
    lat = latency_table(s)
    if lat:
        md += ["## SuperServer latencies (median over runs; 25% bucket resolution, "
               "includes the clock read)", "", lat]
    if callgrind:
        md += ["## Instructions per malloc+free pair (callgrind, single thread)", "",
               "Counted by valgrind --tool=callgrind for N and 2N pairs of microbench "
               "(with its window of live objects, as in the microbench cells; \"new\": "
               "C++'s new and sized delete, as in the microbench-cxx cells): "
               "(count(2N) - count(N)) / N, less the same for the loop without malloc and "
               "free (its last row, already subtracted).", "",
               callgrind_table(allocs, callgrind, baseline)]
    with open(os.path.join(outdir, "results.md"), "w") as f:
        f.write("\n".join(md) + "\n")
