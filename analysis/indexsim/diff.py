# SPDX-License-Identifier: Apache-2.0
"""`indexsim diff A B`: what changed between two runs or two databases.

A and B are each a results database (DB), or one run in it (DB:KEY, a key prefix is enough).
Between two databases the runs are paired by key (the same resolved configuration; two
databases of one run each are paired whatever their keys); for each pair: the step, the roofline
and every metric, then the kernels whose duration moved most (paired by name and layer)."""
from __future__ import annotations

import math
import os
from contextlib import closing
from dataclasses import dataclass
from typing import List, Optional, Tuple

import pandas as pd

from .results import _connect


@dataclass
class RunRef:
    db: str
    key: Optional[str] = None

    @classmethod
    def parse(cls, text: str) -> "RunRef":
        # DB:KEY, where DB itself may contain ':' (a path): the key is after the last one, if the
        # part before it is a file.
        if not os.path.isfile(text) and ":" in text:
            db, key = text.rsplit(":", 1)
            if os.path.isfile(db):
                return cls(db, key)
        if not os.path.isfile(text):
            raise FileNotFoundError(f"{text}: no such results database (give DB or DB:KEY)")
        return cls(text)


def _runs(ref: RunRef) -> pd.DataFrame:
    with closing(_connect(ref.db)) as con:
        runs = pd.read_sql_query("SELECT key, hardware, workload, techniques, status, code_version, step_ns, "
                                 "roofline_ns FROM runs ORDER BY key", con)
    if ref.key is not None:
        runs = runs[runs["key"].str.startswith(ref.key)]
        if len(runs) != 1:
            raise ValueError(f"{ref.db}: key '{ref.key}' matches {len(runs)} runs; give more of it")
    return runs


def pairs(a: RunRef, b: RunRef) -> List[Tuple[str, str]]:
    """(key in A, key in B) of the runs compared."""
    ra, rb = _runs(a), _runs(b)
    if len(ra) == 1 and len(rb) == 1:
        return [(ra["key"].iloc[0], rb["key"].iloc[0])]
    common = sorted(set(ra["key"]) & set(rb["key"]))
    return [(k, k) for k in common]


def _metrics(db: str, key: str) -> pd.Series:
    with closing(_connect(db)) as con:
        m = pd.read_sql_query("SELECT name, value, unit FROM metrics WHERE run=?", con, params=(key,))
        r = con.execute("SELECT step_ns, roofline_ns FROM runs WHERE key=?", (key,)).fetchone()
    s = pd.Series({"step_us": r[0] / 1e3, "roofline_us": r[1] / 1e3, **dict(zip(m["name"], m["value"]))})
    return s


def _units(db: str, key: str) -> dict:
    with closing(_connect(db)) as con:
        return dict(con.execute("SELECT name, unit FROM metrics WHERE run=?", (key,)).fetchall())


def metric_diff(a: RunRef, ka: str, b: RunRef, kb: str) -> pd.DataFrame:
    """Every metric of either run: A, B, B - A and the change in per cent of A; rows that moved first."""
    ma, mb = _metrics(a.db, ka), _metrics(b.db, kb)
    units = {"step_us": "us", "roofline_us": "us", **_units(a.db, ka), **_units(b.db, kb)}
    df = pd.DataFrame({"a": ma, "b": mb})
    df["delta"] = df["b"] - df["a"]
    df["delta_percent"] = [100 * d / x if x and not math.isnan(x) and x != 0 else float("nan")
                           for d, x in zip(df["delta"], df["a"])]
    df["unit"] = [units.get(n, "") for n in df.index]
    df.index.name = "metric"
    moved = df["delta"].fillna(1).abs() > 0
    return pd.concat([df[moved], df[~moved]])


def kernel_diff(a: RunRef, ka: str, b: RunRef, kb: str, top: int = 10) -> pd.DataFrame:
    """The kernels (by name and layer) whose duration changed most, in microseconds."""
    def load(ref, key):
        with closing(_connect(ref.db)) as con:
            k = pd.read_sql_query("SELECT name, layer, start_ns, end_ns FROM kernels WHERE run=?", con, params=(key,))
        k["us"] = (k["end_ns"] - k["start_ns"]) / 1e3
        # A kernel name repeats within a layer (two GEMMs of one kind): number the repeats.
        k["n"] = k.groupby(["name", "layer"]).cumcount()
        return k.set_index(["name", "layer", "n"])["us"]
    ua, ub = load(a, ka), load(b, kb)
    df = pd.DataFrame({"a_us": ua, "b_us": ub})
    df["delta_us"] = df["b_us"].fillna(0) - df["a_us"].fillna(0)
    df = df.reindex(df["delta_us"].abs().sort_values(ascending=False).index)
    return df.head(top)


def _num(v: float) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v:,.4g}" if abs(v) < 1e15 else f"{v:.3e}"


def text(a: RunRef, b: RunRef, top: int = 10) -> str:
    """The report `indexsim diff` prints."""
    out: List[str] = []
    ps = pairs(a, b)
    if not ps:
        return f"no run of {a.db} has a key in {b.db}: nothing to pair (give DB:KEY for each side)\n"
    for ka, kb in ps:
        out.append(f"A {a.db}:{ka}  vs  B {b.db}:{kb}")
        md = metric_diff(a, ka, b, kb)
        moved = md[md["delta"].fillna(1).abs() > 0]
        out.append(f"  metrics: {len(moved)} of {len(md)} differ")
        if len(moved):
            out.append(f"  {'metric':32s} {'A':>14s} {'B':>14s} {'B - A':>14s} {'change':>9s}  unit")
        for name, r in moved.iterrows():
            pct = "n/a" if math.isnan(r["delta_percent"]) else f"{r['delta_percent']:+.2f} %"
            out.append(f"  {name:32s} {_num(r['a']):>14s} {_num(r['b']):>14s} {_num(r['delta']):>14s} {pct:>9s}  {r['unit']}")
        kd = kernel_diff(a, ka, b, kb, top)
        kd = kd[kd["delta_us"].abs() > 0]
        if len(kd):
            out.append(f"  kernels that moved most (of {top}):")
            out.append(f"  {'kernel':40s} {'layer':>5s} {'A us':>12s} {'B us':>12s} {'B - A us':>12s}")
            for (name, layer, _), r in kd.iterrows():
                out.append(f"  {name[:40]:40s} {layer:5d} {_num(r['a_us']):>12s} {_num(r['b_us']):>12s} {_num(r['delta_us']):>12s}")
        out.append("")
    return "\n".join(out) + "\n"
