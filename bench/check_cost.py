#!/usr/bin/env python3
"""`check` before and after a change, on the 10,000-case workspace (issue 12's benchmark).

Usage: python3 bench/check_cost.py BEFORE_BIN AFTER_BIN [--runs N] [--warmup N] [--ws DIR]

Generates the workspace of `bench/compare` (the customer-support corpus plus 10,000
generated cases, `compare.gen_workspace`) unless `--ws` names an existing one, then runs
`<bin> check --format json .` in it, alternating the two binaries run by run so a change in
machine load hits both alike. Each run's wall time, CPU time (user + system) and peak RSS
come from `os.wait4` of that run alone. Prints the median, min and max of each and the
after/before ratio of the medians; exits non-zero if a run's exit code or JSON output
changes from run to run (a difference between the two is printed as a note: a change may
add diagnostics).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent


def run_once(binary, ws):
    t0 = time.perf_counter()
    p = subprocess.Popen([binary, "check", "--format", "json", "."], cwd=ws,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    return {
        "wall_ms": wall * 1e3,
        "cpu_ms": (ru.ru_utime + ru.ru_stime) * 1e3,
        "rss_mib": ru.ru_maxrss / 1024.0,
        "code": p.returncode,
        "out": out,
    }


def summary(runs, key):
    xs = [r[key] for r in runs]
    return statistics.median(xs), min(xs), max(xs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--ws", type=pathlib.Path)
    a = ap.parse_args()
    ws = a.ws
    if ws is None or not ws.exists():
        sys.path.insert(0, str(HERE / "compare"))
        import compare  # noqa: E402  (bench/compare/compare.py: the one generator)
        ws = ws or pathlib.Path("target/check-cost-ws")
        compare.gen_workspace(ws, a.cases)
    bins = {"before": os.path.abspath(a.before), "after": os.path.abspath(a.after)}
    for _ in range(a.warmup):
        for b in bins.values():
            run_once(b, ws)
    runs = {k: [] for k in bins}
    for _ in range(a.runs):
        for k, b in bins.items():
            runs[k].append(run_once(b, ws))
    outs = {k: {(r["code"], r["out"]) for r in v} for k, v in runs.items()}
    print(f"workspace: {ws}, {a.runs} runs each after {a.warmup} warm-ups, alternating; "
          f"load at end {os.getloadavg()[0]:.1f}")
    med = {}
    for k, v in runs.items():
        n_diags = len(json.loads(v[0]["out"]).get("diagnostics", []))
        line = [f"{k:6}: exit {v[0]['code']}, {n_diags} diagnostics"]
        for key, unit in (("wall_ms", "ms"), ("cpu_ms", "ms"), ("rss_mib", "MiB")):
            m, lo, hi = summary(v, key)
            med[(k, key)] = m
            line.append(f"{key} median {m:.1f} {unit} (min {lo:.1f}, max {hi:.1f})")
        print("; ".join(line))
    for key in ("wall_ms", "cpu_ms", "rss_mib"):
        print(f"after/before {key}: {med[('after', key)] / med[('before', key)]:.3f}")
    if len(outs["before"]) != 1 or len(outs["after"]) != 1:
        print("a binary gave different outputs across runs", file=sys.stderr)
        return 1
    if outs["before"] != outs["after"]:
        print("note: the two binaries' outputs differ (exit code or JSON)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
