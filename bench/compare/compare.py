#!/usr/bin/env python3
"""Side-by-side benchmarks of wfx-lsp (issue 8), driven by `bench/compare/run.sh`.

Measures, each comparison within one run so that the ratio is meaningful on a shared
machine (the load average is recorded next to each figure):
  lsp      the same scripted LSP session over stdio against yaml-language-server (with
           our JSON Schemas via `yaml.schemas`) and wfx-lsp: startup to first
           diagnostics, N single-character edits with a completion request after each,
           p50/p99 of edit → publishDiagnostics and of completion, peak RSS (VmHWM);
           startup on a 10,000-case workspace; RSS per open document.
  check    `wfx-lsp check --format json` vs ajv-cli vs check-jsonschema vs the raw
           saphyr-parser event parse over a generated 10,000-case workspace.
  runner   `wfx-lsp test --skip-grades` over generated suites: overhead per case and step.
  soak     100,000 random edits across 50 documents, completion every 10 edits; RSS at
           start, along the way and at the end.
  adversarial  the adversarial corpus of tests/robustness_check.rs (alias bomb, 50 MB
           file, 100,000-deep nesting, invalid UTF-8, NUL bytes, a 1 MiB line, 100,000
           keys, mixed CRLF/LF, a BOM in the middle) through the release `wfx-lsp check`
           (wall time, peak RSS, codes) and opened over stdio (time to first diagnostics).
Writes target/bench-compare/results.json and prints a table. Python stdlib only.
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from lsp_client import Client, children_of, vm_field  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / "target/bench-tools"
OUT = Path(os.environ.get("WFX_BENCH_OUT", REPO / "target/bench-compare"))
CORPUS = REPO / "tests/corpus/customer-support"
WFX = REPO / "target/release/wfx-lsp"
YLS = TOOLS / "npm/node_modules/yaml-language-server/bin/yaml-language-server"
CASE_SCHEMA = REPO / "schemas/case.schema.json"
WORKFLOW_SCHEMA = REPO / "schemas/workflow.schema.json"
TESTS_REL = "workflows/order-lookup/tests"


def load():
    return os.getloadavg()[0]


def pct(samples, p):
    s = sorted(samples)
    return s[min(len(s) - 1, max(0, round((len(s) - 1) * p)))]


def uri(p):
    return Path(p).resolve().as_uri()


def corpus_cases():
    d = CORPUS / TESTS_REL
    return sorted((p.name, p.read_text()) for p in d.glob("*.test.yaml"))


def small_case():
    return (CORPUS / TESTS_REL / "refund-approved.test.yaml").read_text()


def large_case():
    """A ~3,000-line case (same shape as bench/src/main.rs's)."""
    s = "title: Large case\ndescription: Many steps, for the benchmark.\nsteps:\n"
    lines = 3
    i = 0
    while lines < 3000:
        s += (
            f'  - send: "message {i} about ORD-1001"\n'
            '  - reply:\n      includes: ["ORD-1001", "/approv/i"]\n'
            "  - reachedState: refund-request\n"
        )
        lines += 4
        i += 1
    return s


def gen_workspace(root, n):
    """A copy of the corpus plus `n` generated cases (the corpus cases, retitled) under
    workflows/order-lookup/tests/gen/NNN/. Returns the generated paths."""
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(CORPUS, root)
    cases = corpus_cases()
    paths = []
    for i in range(n):
        name, text = cases[i % len(cases)]
        d = root / TESTS_REL / "gen" / f"{i // 100:03}"
        d.mkdir(parents=True, exist_ok=True)
        p = d / f"case-{i:05}.test.yaml"
        p.write_text(text.replace("title: ", f"title: C{i} ", 1))
        paths.append(p)
    return paths


# -- servers ---------------------------------------------------------------------------

def servers():
    yaml_settings = {
        "yaml": {
            "validate": True,
            "completion": True,
            "hover": True,
            "format": {"enable": False},
            "schemaStore": {"enable": False},
            "schemas": {
                uri(CASE_SCHEMA): ["**/*.test.yaml"],
                uri(WORKFLOW_SCHEMA): ["**/workflow.yaml"],
            },
        },
        "[yaml]": {},
        "editor": {"tabSize": 2},
    }
    return {
        "yaml-language-server": (["node", str(YLS), "--stdio"], yaml_settings, {}),
        # WFX_BENCH_WRAP (e.g. "valgrind --tool=massif") runs wfx-lsp under a tool.
        "wfx-lsp": (os.environ.get("WFX_BENCH_WRAP", "").split() + [str(WFX), "lsp", "--stdio"],
                    {"wfx": {}}, {"runner": {"skipGrades": True}}),
    }


def spawn(name, cwd=None):
    argv, settings, init = servers()[name]
    c = Client(argv, settings, cwd=cwd)
    return c, init


def session(name, ws, rel, text, edits):
    """Startup to first diagnostics, then `edits` single-character edits (insert `x`
    after `title: `, then delete it) each followed by a completion request at a step key."""
    path = ws / rel
    path.write_text(text)
    u = uri(path)
    lines = text.split("\n")
    cl = next(i for i, l in enumerate(lines) if l.startswith("  - reachedState"))
    c, init = spawn(name, cwd=ws)
    c.initialize(uri(ws), init)
    c.open(u, text, 1)
    t_first, first = c.diagnostics(u, 1)
    startup_ms = (t_first - c.t_spawn) * 1e3
    n_first = len(first["params"]["diagnostics"])
    edit_ms, comp_ms, comp_items = [], [], []
    for i in range(edits):
        v = i + 2
        c.drain()
        t0 = time.perf_counter()
        if i % 2 == 0:
            c.change(u, v, 0, 7, 0, 7, "x")
        else:
            c.change(u, v, 0, 7, 0, 8, "")
        t1, _ = c.diagnostics(u, v)
        edit_ms.append((t1 - t0) * 1e3)
        t0 = time.perf_counter()
        rid = c.completion(u, cl, 6)
        t1, res = c.response(rid)
        comp_ms.append((t1 - t0) * 1e3)
        r = res.get("result")
        items = r.get("items", []) if isinstance(r, dict) else (r or [])
        comp_items.append(len(items))
    hwm = vm_field(c.pid, "VmHWM")
    c.close()
    return {
        "server": name,
        "lines": len(lines) - (1 if text.endswith("\n") else 0),
        "edits": edits,
        "startup_ms": startup_ms,
        "first_diagnostics": n_first,
        "edit_p50_ms": pct(edit_ms, 0.5),
        "edit_p99_ms": pct(edit_ms, 0.99),
        "edit_max_ms": max(edit_ms) if edit_ms else None,
        "completion_p50_ms": pct(comp_ms, 0.5),
        "completion_p99_ms": pct(comp_ms, 0.99),
        "completion_items_median": pct(comp_items, 0.5),
        "peak_rss_mib": (hwm or 0) / 1024,
        "load": load(),
    }


def sanity(name, ws):
    """Does the server report an unknown key in a case? (Is the schema applied?)"""
    p = ws / TESTS_REL / "sanity.test.yaml"
    text = "title: Sanity\ndescription: x\nsteps:\n  - sned: hi\n"
    p.write_text(text)
    c, init = spawn(name, cwd=ws)
    c.initialize(uri(ws), init)
    c.open(uri(p), text, 1)
    _, m = c.diagnostics(uri(p), 1)
    msgs = [d["message"] for d in m["params"]["diagnostics"]]
    # yaml-language-server may publish once before its schema is resolved: give it one
    # more edit round.
    if not msgs:
        c.change(uri(p), 2, 0, 7, 0, 7, "x")
        _, m = c.diagnostics(uri(p), 2)
        msgs = [d["message"] for d in m["params"]["diagnostics"]]
    c.close()
    p.unlink()
    return msgs


def startup_big(name, ws, paths):
    c, init = spawn(name, cwd=ws)
    c.initialize(uri(ws), init)
    p = paths[len(paths) // 2]
    c.open(uri(p), p.read_text(), 1)
    t, _ = c.diagnostics(uri(p), 1)
    ms = (t - c.t_spawn) * 1e3
    hwm = vm_field(c.pid, "VmHWM")
    c.close()
    return {"server": name, "cases": len(paths), "startup_ms": ms,
            "peak_rss_mib": (hwm or 0) / 1024, "load": load()}


def mem_per_doc(name, ws, paths, n):
    c, init = spawn(name, cwd=ws)
    c.initialize(uri(ws), init)
    first = paths[0]
    c.open(uri(first), first.read_text(), 1)
    c.diagnostics(uri(first), 1)
    time.sleep(0.5)
    before = vm_field(c.pid, "VmRSS")
    docs = paths[1 : n + 1]
    for p in docs:
        c.open(uri(p), p.read_text(), 1)
    pending = {uri(p) for p in docs}
    while pending:
        _, m = c.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics",
                      "diagnostics")
        pending.discard(m["params"]["uri"])
    time.sleep(0.5)
    after = vm_field(c.pid, "VmRSS")
    c.close()
    return {"server": name, "docs": n, "rss_before_mib": before / 1024,
            "rss_after_mib": after / 1024, "kib_per_doc": (after - before) / n,
            "load": load()}


# -- check -----------------------------------------------------------------------------

def timed(argv, cwd, env=None):
    t = time.perf_counter()
    p = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    return time.perf_counter() - t, p


def median_run(argv, cwd, runs=3):
    """Runs argv `runs` times; returns (median wall seconds, last completed process)."""
    times, p = [], None
    for _ in range(runs):
        t, p = timed(argv, cwd)
        times.append(t)
    return sorted(times)[len(times) // 2], p


def check_bench(ws, n):
    """Median of 3 runs each (check-jsonschema: 1 run, it takes ~45 s)."""
    files = sorted(str(p.relative_to(ws)) for p in (ws / TESTS_REL / "gen").rglob("*.test.yaml"))
    assert len(files) == n, len(files)
    out = {}
    rows = []
    listfile = OUT / "files.txt"
    listfile.write_text("\n".join(files) + "\n")
    # wfx-lsp check of the generated cases only (the same files the others see), on every
    # core (the default) and pinned to one core.
    argv = [str(WFX), "check", "--format", "json", f"{TESTS_REL}/gen"]
    t, p = median_run(argv, ws)
    rep = json.loads(p.stdout)
    rows.append(("wfx-lsp check --format json", t, rep["summary"]["files"],
                 f"exit {p.returncode}, {rep['summary']['errors']} errors, {os.cpu_count()} cores"))
    t, p = median_run(["taskset", "-c", "0", *argv], ws)
    rep = json.loads(p.stdout)
    rows.append(("wfx-lsp check, one core (taskset -c 0)", t, rep["summary"]["files"],
                 f"exit {p.returncode}, {rep['summary']['errors']} errors"))
    t, p = median_run([str(REPO / "target/release/examples/parse_only"), listfile.as_posix()], ws)
    rows.append(("raw parse (saphyr-parser events)", t, n, p.stdout.decode().strip()))
    ajv = TOOLS / "npm/node_modules/.bin/ajv"
    t, p = median_run([str(ajv), "validate", "--spec=draft2020", "--strict=false", "-c",
                       "ajv-formats", "-s", str(CASE_SCHEMA), "-d",
                       f"{TESTS_REL}/gen/**/*.test.yaml"], ws)
    lines = (p.stdout + p.stderr).decode().splitlines()
    valid = sum(1 for l in lines if l.endswith(" valid"))
    invalid = sum(1 for l in lines if l.endswith(" invalid"))
    rows.append(("ajv-cli validate (YAML data)", t, n,
                 f"exit {p.returncode}, {valid} valid, {invalid} invalid"))
    cj = TOOLS / "venv/bin/check-jsonschema"
    t, p = timed([str(cj), "--schemafile", str(CASE_SCHEMA), *files], ws)
    rows.append(("check-jsonschema (1 run)", t, n, f"exit {p.returncode}, "
                 + (p.stdout.decode().strip().splitlines() or [""])[0][:60]))
    for name, t, files_n, note in rows:
        out[name] = {"wall_s": t, "files": files_n, "files_per_s": files_n / t,
                     "note": note, "load": load()}
    return out


# -- runner ----------------------------------------------------------------------------

def runner_bench(copies):
    """`wfx-lsp test --skip-grades` over the example suite and over `copies` extra copies
    of each scripted case (case + agent script). Overhead per case is the slope."""
    res = {}
    steps_per_copy = 0
    for name, text in corpus_cases():
        steps_per_copy += sum(1 for l in text.split("\n") if l.startswith("  - "))
    for k in (0, copies):
        ws = OUT / f"runner-{k}"
        gen_runner_ws(ws, k)
        best = None
        for _ in range(3):
            t, p = timed([str(WFX), "test", "--skip-grades"], ws)
            best = t if best is None else min(best, t)
        n_cases = len(list((ws / TESTS_REL).rglob("*.test.yaml")))
        res[k] = {"cases": n_cases, "wall_s": best, "exit": p.returncode,
                  "tail": p.stdout.decode().strip().splitlines()[-1:],
                  "steps": steps_per_copy * (k + 1), "load": load()}
    a, b = res[0], res[copies]
    per_case = (b["wall_s"] - a["wall_s"]) / (b["cases"] - a["cases"])
    per_step = (b["wall_s"] - a["wall_s"]) / (b["steps"] - a["steps"])
    return {"suites": res, "per_case_ms": per_case * 1e3, "per_step_ms": per_step * 1e3,
            "steps_per_case": steps_per_copy / len(corpus_cases())}


def gen_runner_ws(ws, k):
    if ws.exists():
        shutil.rmtree(ws)
    shutil.copytree(CORPUS, ws)
    tests = ws / TESTS_REL
    for i in range(k):
        d = tests / "copies" / f"c{i:04}"
        d.mkdir(parents=True)
        for p in tests.glob("*.yaml"):
            shutil.copy(p, d / p.name)


# -- soak ------------------------------------------------------------------------------

def soak(edits, ndocs, ws):
    c, init = spawn("wfx-lsp", cwd=ws)
    c.initialize(uri(ws), init)
    base = corpus_cases()
    docs = []
    for i in range(ndocs):
        name, text = base[i % len(base)]
        p = ws / TESTS_REL / f"soak-{i:02}.test.yaml"
        p.write_text(text)
        docs.append({"uri": uri(p), "text": text, "version": 1, "orig": len(text)})
        c.open(uri(p), text, 1)
    for d in docs:
        c.diagnostics(d["uri"], 1)
    time.sleep(0.5)
    rss = [(0, vm_field(c.pid, "VmRSS") / 1024)]
    rng = random.Random(8)
    alphabet = ["x", " ", "\n", ":", "-", "a", "1", "\"", "é", "  - send: hi\n"]
    t_start = time.perf_counter()
    comp_ms = []
    for i in range(1, edits + 1):
        d = docs[rng.randrange(ndocs)]
        t = d["text"]
        off = rng.randrange(len(t) + 1)
        # Inserts and deletes balance around the original size (within about ±10%), so
        # the documents' own size stays stationary and RSS growth would be the server's.
        grow = len(t) < 0.9 * d["orig"]
        if len(t) > 1.1 * d["orig"] or (t and not grow and rng.random() < 0.5):
            end = min(len(t), off + rng.randrange(1, 4))
            new = ""
        else:
            end = off
            new = rng.choice(alphabet)
        (sl, sc), (el, ec) = pos(t, off), pos(t, end)
        d["text"] = t[:off] + new + t[end:]
        d["version"] += 1
        c.change(d["uri"], d["version"], sl, sc, el, ec, new)
        if i % 10 == 0:
            lines = d["text"].split("\n")
            line = rng.randrange(len(lines))
            col = rng.randrange(len(lines[line]) + 1)
            t0 = time.perf_counter()
            rid = c.completion(d["uri"], line, utf16(lines[line][:col]))
            t1, _ = c.response(rid)
            comp_ms.append((t1 - t0) * 1e3)
            c.drain()
        if i % 20000 == 0:
            rss.append((i, vm_field(c.pid, "VmRSS") / 1024))
            size = sum(len(x["text"]) for x in docs)
            print(f"soak: {i} edits, VmRSS {rss[-1][1]:.2f} MiB, documents {size} bytes",
                  flush=True)
    rid = c.completion(docs[0]["uri"], 0, 0)
    c.response(rid)
    time.sleep(1.0)
    rss.append((edits, vm_field(c.pid, "VmRSS") / 1024))
    hwm = vm_field(c.pid, "VmHWM") / 1024
    alive = c.proc.poll() is None
    wall = time.perf_counter() - t_start
    c.close()
    return {"edits": edits, "docs": ndocs, "wall_s": wall, "rss_mib": rss, "peak_rss_mib": hwm,
            "completion_p50_ms": pct(comp_ms, 0.5), "completion_p99_ms": pct(comp_ms, 0.99),
            "alive_at_end": alive, "exit": c.proc.returncode, "load": load()}


def pos(text, off):
    before = text[:off]
    line = before.count("\n")
    col = before[before.rfind("\n") + 1 :]
    return line, utf16(col)


def utf16(s):
    return len(s.encode("utf-16-le")) // 2


# -- adversarial -----------------------------------------------------------------------

def adversarial_inputs():
    """(stem, bytes), the same inputs as tests/robustness_check.rs plus the 50 MB case."""
    tail = "description: An adversarial case.\nsteps:\n  - send: hi\n"
    bomb = "title: Bomb\ndescription: x\nvariables:\n  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    prev = "a"
    for n in "bcdefghijk":
        bomb += f"  {n}: &{n} [{', '.join(['*' + prev] * 9)}]\n"
        prev = n
    bomb += "steps:\n  - send: hi\n"
    deep_seq = f"title: Deep\n{tail}variables:\n  v: {'[' * 100000}{']' * 100000}\n"
    deep_map = f"title: Deep map\n{tail}variables:\n  v: {'{a: ' * 100000}1{'}' * 100000}\n"
    many_keys = f"title: Many keys\n{tail}variables:\n" + "".join(f"  k{i}: {i}\n" for i in range(100000))
    many_top = "title: Many top-level keys\n" + "".join(f"key{i}: {i}\n" for i in range(100000)) + tail
    big = ["title: Fifty megabytes\ndescription: A very large case.\nsteps:\n"]
    n, i = len(big[0]), 0
    while n < 50 * 1024 * 1024:
        line = f'  - send: "{"z" * 100} {i}"\n'
        big.append(line)
        n += len(line)
        i += 1
    big.append("  - sned: the only mistake\n")
    return [
        ("alias-bomb", bomb.encode()),
        ("deep-seq", deep_seq.encode()),
        ("deep-map", deep_map.encode()),
        ("invalid-utf8", b"title: Bad \xff\xfe\xc3\x28 bytes\ndescription: x\nsteps: []\n"),
        ("nul", b'title: "a \x00 b"\ndescription: x\x00y\nsteps:\n  - send: hi\n'),
        ("long-line", f'title: "{"L" * 1048576}"\n{tail}'.encode()),
        ("many-keys", many_keys.encode()),
        ("many-top-keys", many_top.encode()),
        ("mixed-crlf", b"title: Mixed line ends\r\ndescription: CRLF and LF\nsteps:\r\n  - send: hi\n  - sned: typo\r\n"),
        ("bom-middle", f"title: BOM\n\ufeff{tail}".encode()),
        ("fifty-mb", "".join(big).encode()),
    ]


def peak_rss_run(argv, cwd):
    """Runs argv, sampling VmHWM until exit; returns (seconds, exit code, stdout, KiB)."""
    t = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    peak = 0
    out = []
    reader = __import__("threading").Thread(target=lambda: out.append(p.stdout.read()), daemon=True)
    reader.start()
    while p.poll() is None:
        peak = max(peak, vm_field(p.pid, "VmHWM") or 0)
        time.sleep(0.002)
    reader.join()
    return time.perf_counter() - t, p.returncode, out[0] if out else b"", peak


def adversarial(ws):
    rows = []
    c, init = spawn("wfx-lsp", cwd=ws)
    c.initialize(uri(ws), init)
    for stem, data in adversarial_inputs():
        rel = f"{TESTS_REL}/{stem}.test.yaml"
        (ws / rel).write_bytes(data)
        secs, code, out, peak = peak_rss_run([str(WFX), "check", "--format", "json", rel], ws)
        rep = json.loads(out)
        codes = sorted({d["code"] for d in rep["diagnostics"]})
        # Over stdio: the text as an editor sends it (invalid bytes become U+FFFD).
        text = data.decode("utf-8", errors="replace")
        u = uri(ws / rel)
        t0 = time.perf_counter()
        c.open(u, text, 1)
        t1, m = c.diagnostics(u, 1)
        lsp_codes = sorted({d.get("code") for d in m["params"]["diagnostics"]})
        row = {"input": stem, "bytes": len(data), "check_ms": secs * 1e3, "exit": code,
               "check_peak_rss_mib": peak / 1024, "diagnostics": len(rep["diagnostics"]),
               "codes": codes, "lsp_first_diagnostics_ms": (t1 - t0) * 1e3,
               "lsp_codes": lsp_codes, "load": load()}
        print(json.dumps(row), flush=True)
        rows.append(row)
    hwm = vm_field(c.pid, "VmHWM")
    alive = c.proc.poll() is None
    c.close()
    return {"rows": rows, "server_peak_rss_mib": (hwm or 0) / 1024, "alive_at_end": alive}


# -- main ------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("parts", nargs="*", default=["lsp", "check", "runner", "soak", "adversarial"])
    ap.add_argument("--edits", type=int, default=1000)
    ap.add_argument("--yls-edits", type=int, default=None,
                    help="edits for yaml-language-server (default: --edits)")
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--docs", type=int, default=200, help="documents for RSS per document")
    ap.add_argument("--soak-edits", type=int, default=100000)
    ap.add_argument("--runner-copies", type=int, default=50)
    a = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    resfile = OUT / "results.json"
    results = json.loads(resfile.read_text()) if resfile.exists() else {}
    ws = OUT / "ws"
    paths = None
    if "lsp" in a.parts or "check" in a.parts:
        paths = gen_workspace(ws, a.cases)
    if "lsp" in a.parts:
        small_ws = OUT / "small-ws"
        if small_ws.exists():
            shutil.rmtree(small_ws)
        shutil.copytree(CORPUS, small_ws)
        lsp = {"sanity": {}, "sessions": [], "startup_10k": [], "mem_per_doc": []}
        for name in servers():
            lsp["sanity"][name] = sanity(name, small_ws)
            print(f"sanity {name}: {lsp['sanity'][name]}", flush=True)
        for label, text in (("small", small_case()), ("large", large_case())):
            for name in servers():
                n = a.edits if name == "wfx-lsp" else (a.yls_edits or a.edits)
                r = session(name, small_ws, f"{TESTS_REL}/bench-{label}.test.yaml", text, n)
                r["case"] = label
                print(json.dumps(r), flush=True)
                lsp["sessions"].append(r)
        for name in servers():
            r = startup_big(name, ws, paths)
            print(json.dumps(r), flush=True)
            lsp["startup_10k"].append(r)
            r = mem_per_doc(name, ws, paths, a.docs)
            print(json.dumps(r), flush=True)
            lsp["mem_per_doc"].append(r)
        results["lsp"] = lsp
        resfile.write_text(json.dumps(results, indent=2))
    if "check" in a.parts:
        results["check"] = check_bench(ws, a.cases)
        print(json.dumps(results["check"], indent=1), flush=True)
        resfile.write_text(json.dumps(results, indent=2))
    if "runner" in a.parts:
        results["runner"] = runner_bench(a.runner_copies)
        print(json.dumps(results["runner"], indent=1), flush=True)
        resfile.write_text(json.dumps(results, indent=2))
    if "soak" in a.parts:
        soak_ws = OUT / "soak-ws"
        if soak_ws.exists():
            shutil.rmtree(soak_ws)
        shutil.copytree(CORPUS, soak_ws)
        results["soak"] = soak(a.soak_edits, 50, soak_ws)
        print(json.dumps(results["soak"]), flush=True)
        resfile.write_text(json.dumps(results, indent=2))
    if "adversarial" in a.parts:
        adv_ws = OUT / "adversarial-ws"
        if adv_ws.exists():
            shutil.rmtree(adv_ws)
        shutil.copytree(CORPUS, adv_ws)
        results["adversarial"] = adversarial(adv_ws)
        resfile.write_text(json.dumps(results, indent=2))
    table(results)
    (OUT / "results.md").write_text(render(results))
    print(f"markdown: {OUT / 'results.md'}")


def render(r):
    """The figures as Markdown tables (pasted into docs/performance.md)."""
    out = []
    lsp = r.get("lsp", {})
    if lsp:
        out += ["| server | case | edits | startup to first diagnostics | edit → diagnostics p50 / p99 / max |"
                " completion p50 / p99 | peak RSS | load |",
                "|---|---|---|---|---|---|---|---|"]
        for s in lsp["sessions"]:
            out.append(f"| {s['server']} | {s['lines']} lines | {s['edits']} | {s['startup_ms']:.1f} ms |"
                       f" {s['edit_p50_ms']:.2f} / {s['edit_p99_ms']:.2f} / {s['edit_max_ms']:.2f} ms |"
                       f" {s['completion_p50_ms']:.2f} / {s['completion_p99_ms']:.2f} ms |"
                       f" {s['peak_rss_mib']:.1f} MiB | {s['load']:.1f} |")
        out += ["", "| server | startup to first diagnostics, 10,000-case workspace | peak RSS | load |",
                "|---|---|---|---|"]
        for s in lsp["startup_10k"]:
            out.append(f"| {s['server']} | {s['startup_ms']:.1f} ms | {s['peak_rss_mib']:.1f} MiB | {s['load']:.1f} |")
        out += ["", "| server | documents opened | RSS before → after | per open document | load |",
                "|---|---|---|---|---|"]
        for s in lsp["mem_per_doc"]:
            out.append(f"| {s['server']} | {s['docs']} | {s['rss_before_mib']:.1f} → {s['rss_after_mib']:.1f} MiB |"
                       f" {s['kib_per_doc']:.1f} KiB | {s['load']:.1f} |")
    if "check" in r:
        out += ["", "| tool | files | wall | files/s | notes | load |", "|---|---|---|---|---|---|"]
        for name, c in r["check"].items():
            out.append(f"| {name} | {c['files']} | {c['wall_s']*1e3:.0f} ms | {c['files_per_s']:.0f} |"
                       f" {c['note']} | {c['load']:.1f} |")
    if "runner" in r:
        x = r["runner"]
        out += ["", "| suite | cases | steps | wall (best of 3) | exit | load |", "|---|---|---|---|---|---|"]
        for k, v in x["suites"].items():
            out.append(f"| {k} extra copies | {v['cases']} | {v['steps']} | {v['wall_s']*1e3:.0f} ms |"
                       f" {v['exit']} | {v['load']:.1f} |")
        out.append(f"\nOverhead per scripted case {x['per_case_ms']:.3f} ms, per step"
                   f" {x['per_step_ms']:.4f} ms (slope between the two suites).")
    if "soak" in r:
        x = r["soak"]
        rss = ", ".join(f"{n:,} edits: {m:.1f} MiB" for n, m in x["rss_mib"])
        out += ["", f"Soak: {x['edits']:,} random edits across {x['docs']} documents in {x['wall_s']:.1f} s"
                f" (load {x['load']:.1f}); completion every 10 edits p50 {x['completion_p50_ms']:.2f} ms,"
                f" p99 {x['completion_p99_ms']:.2f} ms; RSS {rss}; peak {x['peak_rss_mib']:.1f} MiB;"
                f" server alive at the end: {x['alive_at_end']}, exit code {x['exit']}."]
    if "adversarial" in r:
        x = r["adversarial"]
        out += ["", "| input | bytes | `check` wall | `check` peak RSS | exit | diagnostics (codes) |"
                " stdio: didOpen → first diagnostics | load |", "|---|---|---|---|---|---|---|---|"]
        for row in x["rows"]:
            out.append(f"| {row['input']} | {row['bytes']:,} | {row['check_ms']:.1f} ms |"
                       f" {row['check_peak_rss_mib']:.1f} MiB | {row['exit']} |"
                       f" {row['diagnostics']} ({', '.join(row['codes'])}) |"
                       f" {row['lsp_first_diagnostics_ms']:.1f} ms | {row['load']:.1f} |")
        out.append(f"\nServer peak RSS over the whole adversarial session"
                   f" {x['server_peak_rss_mib']:.1f} MiB; alive at the end: {x['alive_at_end']}.")
    return "\n".join(out) + "\n"


def table(r):
    print("\n== results (load average in brackets) ==")
    for s in r.get("lsp", {}).get("sessions", []):
        print(f"{s['server']:<21} {s['case']:<5} {s['lines']:>5} lines  startup {s['startup_ms']:8.1f} ms"
              f"  edit p50 {s['edit_p50_ms']:8.2f} p99 {s['edit_p99_ms']:8.2f} ms"
              f"  completion p50 {s['completion_p50_ms']:8.2f} p99 {s['completion_p99_ms']:8.2f} ms"
              f"  peak RSS {s['peak_rss_mib']:6.1f} MiB  [{s['load']:.2f}]")
    for s in r.get("lsp", {}).get("startup_10k", []):
        print(f"{s['server']:<21} startup on {s['cases']} cases {s['startup_ms']:8.1f} ms  [{s['load']:.2f}]")
    for s in r.get("lsp", {}).get("mem_per_doc", []):
        print(f"{s['server']:<21} RSS per open document {s['kib_per_doc']:8.1f} KiB over {s['docs']}"
              f" ({s['rss_before_mib']:.1f} → {s['rss_after_mib']:.1f} MiB)  [{s['load']:.2f}]")
    for name, c in r.get("check", {}).items():
        print(f"{name:<34} {c['wall_s']*1e3:9.0f} ms  {c['files_per_s']:9.0f} files/s  {c['note']}  [{c['load']:.2f}]")
    if "runner" in r:
        x = r["runner"]
        print(f"runner: {x['per_case_ms']:.3f} ms per case, {x['per_step_ms']:.4f} ms per step")
    if "soak" in r:
        x = r["soak"]
        print(f"soak: {x['edits']} edits / {x['docs']} docs in {x['wall_s']:.1f} s, RSS {x['rss_mib']}"
              f" MiB, peak {x['peak_rss_mib']:.1f} MiB, alive {x['alive_at_end']}")


if __name__ == "__main__":
    main()
