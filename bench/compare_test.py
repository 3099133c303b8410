# SPDX-License-Identifier: MIT
"""COMPARE's settings reach only their allocator's runs: parsed from
NAME=LIBRARY[:VAR=VALUE...], put after env in the command of a program,
into the environment of a script, and nowhere for the other allocators.
Usage: compare_test.py (exit 1 on a failure)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

failures = []


def expect(what, got, want):
    if got != want:
        failures.append("%s: got %r, want %r" % (what, got, want))


os.environ.pop("GLIBC_TUNABLES", None)
os.environ.pop("COMPARE", None)
sys.argv = ["harness.py", "--build", "/nonexistent", "--allocators", "primalloc,old,gt",
            "--compare", "old=/x/old.so,gt=/y/t.so:GLIBC_TUNABLES=glibc.pthread.rseq=0:K=a=b"]
allocs, envs = harness.select_allocators(harness.parse_args())
expect("allocators", allocs, [("primalloc", "/nonexistent/libprimalloc.so"),
                              ("old", "/x/old.so"), ("gt", "/y/t.so")])
expect("settings", envs, {"old": {}, "gt": {"GLIBC_TUNABLES": "glibc.pthread.rseq=0", "K": "a=b"}})

cmd, env = harness.launch(["prog", "x=1"], {}, "/y/t.so", False, envs["gt"])
expect("program's command", cmd, ["env", "LD_PRELOAD=/y/t.so", "GLIBC_TUNABLES=glibc.pthread.rseq=0",
                                  "K=a=b", "prog", "x=1"])
expect("program's environment", "GLIBC_TUNABLES" in env, False)
cmd, env = harness.launch(["bash", "s.sh"], {}, "/y/t.so", True, envs["gt"])
expect("script's command", cmd, ["bash", "s.sh"])
expect("script's environment", (env.get("BENCH_PRELOAD"), env.get("GLIBC_TUNABLES")),
       ("/y/t.so", "glibc.pthread.rseq=0"))
cmd, env = harness.launch(["prog"], {}, "/x/old.so", False, envs["old"])
expect("other allocator's command", cmd, ["env", "LD_PRELOAD=/x/old.so", "prog"])

for bad in ("bad=/x.so:NOVALUE", "bad=/x.so:=v", "bad="):
    sys.argv = ["harness.py", "--compare", bad]
    try:
        harness.select_allocators(harness.parse_args())
        failures.append("accepted %r" % bad)
    except SystemExit:
        pass

for f in failures:
    print("FAILED:", f)
sys.exit(1 if failures else 0)
