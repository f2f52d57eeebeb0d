# SPDX-License-Identifier: Apache-2.0
"""Reading a results database (schema: docs/results-schema.md) into pandas."""
from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from typing import Any, Dict, Iterator, Tuple

import pandas as pd

SCHEMA_VERSION = 1
_RUN_COLUMNS = ["key", "status", "error", "hardware", "workload", "seed", "code_version", "wall_s", "created_at"]


def _connect(db: str) -> sqlite3.Connection:
    """A read-only connection to a results database of this schema version. A missing file, a
    directory, a file that is not SQLite or not ours is a ValueError or FileNotFoundError naming it
    (never sqlite3's bare "file is not a database")."""
    if not os.path.isfile(db):
        raise FileNotFoundError(f"{db}: no such results database")
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    except sqlite3.Error as e:
        raise ValueError(f"{db}: cannot open results database: {e}") from e
    try:
        row = con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    except sqlite3.Error as e:
        con.close()
        raise ValueError(f"{db}: not an IndexSim results database ({e})") from e
    if row is None or str(row[0]) != str(SCHEMA_VERSION):
        con.close()
        raise ValueError(f"{db}: schema version {row[0] if row else 'missing'}; this package reads {SCHEMA_VERSION}")
    return con


def flatten(d: Any, prefix: str = "") -> Iterator[Tuple[str, Any]]:
    """Dotted leaves of a nested mapping ("hardware.memory.hbm.stacks"); lists stay whole, as JSON."""
    if isinstance(d, dict):
        for k, v in d.items():
            yield from flatten(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(d, list):
        yield prefix, json.dumps(d, sort_keys=True)
    else:
        yield prefix, d


def load(db: str, config: str = "varying") -> pd.DataFrame:
    """A row per run: the run's fields, its metrics as columns (units in `df.attrs["units"]`),
    `step_us`/`roofline_us`, and the resolved config flattened to dotted columns.

    config: "varying" keeps the config columns whose value differs between runs (the sweep's axes)
    plus every `step.*` column; "all" keeps every leaf; "none" keeps none."""
    if config not in ("varying", "all", "none"):
        raise ValueError(f"config must be 'varying', 'all' or 'none', not {config!r}")
    with closing(_connect(db)) as con:
        runs = pd.read_sql_query(
            f"SELECT {', '.join(_RUN_COLUMNS)}, step_ns, roofline_ns, config FROM runs ORDER BY key", con)
        metrics = pd.read_sql_query("SELECT run, name, value, unit FROM metrics", con)
    units: Dict[str, str] = dict(zip(metrics["name"], metrics["unit"]))
    runs["step_us"] = runs.pop("step_ns") / 1e3
    runs["roofline_us"] = runs.pop("roofline_ns") / 1e3
    configs = [json.loads(c) for c in runs.pop("config")]
    runs["techniques"] = [c.get("techniques", {}).get("name", "") for c in configs]
    if not metrics.empty:
        wide = metrics.pivot(index="run", columns="name", values="value")
        wide.columns.name = None
        runs = runs.join(wide, on="key")
    if config != "none" and configs:
        flat = pd.DataFrame([dict(flatten(c)) for c in configs], index=runs.index)
        if config == "varying":
            keep = [c for c in flat.columns
                    if c.startswith("step.") or c == "mode"
                    or flat[c].astype(str).nunique(dropna=False) > 1]
            flat = flat[keep]
        runs = pd.concat([runs, flat], axis=1)
    runs.attrs["units"] = units
    return runs


def kernels(db: str, key: str) -> pd.DataFrame:
    """The kernels of one run, in launch order."""
    with closing(_connect(db)) as con:
        return pd.read_sql_query("SELECT * FROM kernels WHERE run=? ORDER BY id", con, params=(key,))


def components(db: str, key: str) -> pd.DataFrame:
    with closing(_connect(db)) as con:
        return pd.read_sql_query("SELECT * FROM components WHERE run=? ORDER BY unit, statistic", con, params=(key,))


def row_counts(db: str) -> pd.DataFrame:
    """Rows per run in every table (checks that each stored run is whole)."""
    with closing(_connect(db)) as con:
        return pd.read_sql_query(
            "SELECT r.key, r.status, "
            "(SELECT COUNT(*) FROM metrics m WHERE m.run=r.key) AS metrics, "
            "(SELECT COUNT(*) FROM kernels k WHERE k.run=r.key) AS kernels, "
            "(SELECT COUNT(*) FROM components c WHERE c.run=r.key) AS components "
            "FROM runs r ORDER BY r.key", con)
