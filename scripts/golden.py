#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Golden regression: a small set of runs whose whole results, less wall time and code version, are
kept in tests/golden/ and compared exactly (tests/python/test_golden.py).

A refactor proves itself by leaving them bit for bit identical. A change that moves a model on
purpose regenerates them and says why in its commit:

    python3 scripts/golden.py --regen     # rewrite tests/golden/*.json, print what changed
    python3 scripts/golden.py             # compare only; exit 1 and print the differences
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "golden")

# GLM-5 cut down to two DSA layers with small projections (as configs/sweeps/smoke.yaml), so that
# a run takes well under a second and every kernel kind of a sparse layer is still there.
TINY = ["--set", "workload.model.num_layers=2",
        "--set", "workload.layers=[{first: 0, last: 1, attention: dsa, indexer: full, mlp: dense}]",
        "--set", "workload.model.vocab_size=2048", "--set", "workload.model.hidden_size=1024",
        "--set", "workload.mlp.dense_intermediate_size=1024", "--set", "workload.attention.num_heads=8",
        "--set", "workload.attention.q_lora_rank=512"]
RUN = ["run", "--workload", "glm-5", "--kernels"] + TINY

CASES = {
    "decode-h200-detailed": RUN + ["--hardware", "h200", "--context", "16384"],
    "decode-h200-fast": RUN + ["--hardware", "h200", "--context", "16384", "--fast"],
    "decode-a100-detailed": RUN + ["--hardware", "a100", "--context", "16384"],
    "decode-h100-fast-no-reuse": RUN + ["--hardware", "h100", "--context", "16384", "--fast", "--no-reuse"],
    "prefill-h200-detailed": RUN + ["--hardware", "h200", "--phase", "chunk", "--context", "4096", "--chunk", "256"],
    "prefill-h100-fast": RUN + ["--hardware", "h100", "--phase", "chunk", "--context", "4096", "--chunk", "256", "--fast"],
    "decode-h200-indexshare": RUN + ["--hardware", "h200", "--context", "16384", "--fast", "--techniques", "indexshare"],
    "decode-h200-indexpool": RUN + ["--hardware", "h200", "--context", "16384", "--fast", "--techniques", "indexpool"],
    "decode-h200-dimprune": RUN + ["--hardware", "h200", "--context", "16384", "--fast", "--techniques", "dimprune"],
    "decode-h200-quantize-fp4": RUN + ["--hardware", "h200", "--context", "16384", "--fast", "--techniques", "quantize-fp4"],
    "decode-h200-all-detailed": RUN + ["--hardware", "h200", "--context", "16384", "--techniques", "all"],
    "decode-b200-cxl-spill": RUN + ["--hardware", "b200", "--context", "16384", "--fast",
                                    "--set", "techniques.placement.cxl_enabled=true",
                                    "--set", "techniques.placement.hbm_alloc_strategy=conservative"],
    "bench-memory-stream": ["bench", "memory", "--hardware", "h200", "--pattern", "stream", "--requests", "20000"],
    "bench-memory-random": ["bench", "memory", "--hardware", "h200", "--pattern", "random", "--requests", "20000"],
    "bench-memory-mix": ["bench", "memory", "--hardware", "h100", "--pattern", "mix", "--requests", "20000"],
    "bench-memory-chase": ["bench", "memory", "--hardware", "h200", "--pattern", "pointer-chase",
                           "--target", "system", "--requests", "2000"],
    "bench-memory-system": ["bench", "memory", "--hardware", "h200", "--pattern", "stream", "--target", "system",
                            "--requests", "20000"],
    "bench-memory-cxl": ["bench", "memory", "--hardware", "h200", "--pattern", "random", "--target", "cxl",
                         "--requests", "5000"],
    "bench-memory-sram": ["bench", "memory", "--hardware", "h200", "--pattern", "random", "--target", "sram",
                          "--requests", "5000"],
    "bench-kernel-copy-detailed": ["bench", "kernel", "--hardware", "h200", "copy", "--bytes", "33554432"],
    "bench-kernel-copy-fast": ["bench", "kernel", "--hardware", "h200", "copy", "--bytes", "134217728", "--fast"],
    "bench-kernel-gemm-fast": ["bench", "kernel", "--hardware", "h200", "gemm", "--m", "1024", "--n", "2048",
                               "--k", "1024", "--fast"],
}
SWEEP = os.path.join("configs", "sweeps", "smoke.yaml")

# Keys that say when or how fast a run went, not what it computed.
VOLATILE = {"wall_s", "requests_per_wall_s", "code_version", "created_at"}


def exe():
    build = os.environ.get("INDEXSIM_BUILD_DIR", os.path.join(ROOT, "build"))
    return os.path.join(build if os.path.isabs(build) else os.path.join(ROOT, build), "sim", "indexsim")


def scrub(v):
    if isinstance(v, dict):
        return {k: scrub(x) for k, x in v.items() if k not in VOLATILE}
    if isinstance(v, list):
        return [scrub(x) for x in v]
    return v


def run_case(name):
    """The scrubbed JSON result of one case, as the golden file holds it."""
    if name == "sweep-smoke":
        return run_sweep()
    out = subprocess.run([exe()] + CASES[name] + ["--json"], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{name}: indexsim exited {out.returncode}: {out.stderr.strip()[-2000:]}")
    return scrub(json.loads(out.stdout))


def run_sweep():
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "s.sqlite")
        out = subprocess.run([exe(), "sweep", SWEEP, "--db", db, "--workers", "1"], cwd=ROOT,
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"sweep-smoke: indexsim exited {out.returncode}: {out.stderr.strip()[-2000:]}")
        con = sqlite3.connect(db)
        con.row_factory = sqlite3.Row
        # Rows keyed by what the run is (hardware and context), not by its hash, so that a change
        # of key shows once, in `runs`, and the other tables keep their order.
        label = {r["key"]: f"{r['hardware']}@{json.loads(r['config'])['step']['context']}"
                 for r in con.execute("SELECT key, hardware, config FROM runs")}
        rows = {}
        for table, order in (("runs", "key"), ("metrics", "name"), ("components", "unit, statistic"), ("kernels", "id")):
            got = []
            for r in con.execute(f"SELECT * FROM {table} ORDER BY {order}"):
                d = scrub(dict(r))
                run = d.pop("key" if table == "runs" else "run")
                d["run"] = label[run]
                if table == "runs":
                    d["key"] = run
                    d["config"] = json.loads(d["config"])
                got.append(d)
            rows[table] = sorted(got, key=lambda d: d["run"])  # stable: keeps `order` within a run
        con.close()
        return rows


def names():
    return list(CASES) + ["sweep-smoke"]


def golden_path(name):
    return os.path.join(GOLDEN, name + ".json")


def load_golden(name):
    with open(golden_path(name)) as f:
        return json.load(f)


def diff(a, b, path="", out=None, limit=40):
    """Paths where two JSON values differ, at most `limit` of them."""
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                out.append(f"{path}.{k}: added {json.dumps(b[k])[:120]}")
            elif k not in b:
                out.append(f"{path}.{k}: removed")
            else:
                diff(a[k], b[k], f"{path}.{k}", out, limit)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items -> {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{path}[{i}]", out, limit)
    elif a != b or type(a) is not type(b):
        out.append(f"{path}: {json.dumps(a)[:120]} -> {json.dumps(b)[:120]}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--regen", action="store_true", help="rewrite the golden files and print what changed")
    ap.add_argument("cases", nargs="*", help="only these cases (default: all)")
    a = ap.parse_args()
    os.makedirs(GOLDEN, exist_ok=True)
    bad = 0
    for name in a.cases or names():
        if name not in names():
            sys.exit(f"golden: unknown case '{name}'; cases: {', '.join(names())}")
        new = run_case(name)
        old = load_golden(name) if os.path.exists(golden_path(name)) else None
        d = diff(old, new) if old is not None else ["(no golden file yet)"]
        print(f"{name}: {'identical' if not d else f'{len(d)} difference(s)'}")
        for line in d:
            print("   ", line)
        if d:
            bad += 1
            if a.regen:
                with open(golden_path(name), "w") as f:
                    json.dump(new, f, indent=1, sort_keys=True)
                    f.write("\n")
    if a.regen:
        print(f"golden: {bad} file(s) rewritten")
        return 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
