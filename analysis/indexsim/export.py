# SPDX-License-Identifier: Apache-2.0
"""`indexsim export --db FILE --format csv|parquet --out DIR`: the database's tables as files that
spreadsheets, pandas, Polars, DuckDB or Spark read without SQLite: `runs` (one row per run, its
metrics as columns, the config flattened to dotted columns), and `metrics`, `kernels` and
`components` in long form, keyed by the run."""
from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from typing import Dict, List

import pandas as pd

from .results import _connect, load

FORMATS = ("csv", "parquet")
_LONG = {"metrics": "SELECT * FROM metrics ORDER BY run, name",
         "kernels": "SELECT * FROM kernels ORDER BY run, id",
         "components": "SELECT * FROM components ORDER BY run, unit, statistic"}


def export(db: str, out: str, fmt: str = "csv", config: str = "all") -> Dict[str, str]:
    """Writes runs.<fmt>, metrics.<fmt>, kernels.<fmt> and components.<fmt> under `out`; returns
    {table: path}. Parquet needs pyarrow (or fastparquet); the error says so."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, not {fmt!r}")
    if not os.path.isfile(db):
        raise FileNotFoundError(f"{db}: no such results database")
    if fmt == "parquet":
        try:
            pd.io.parquet.get_engine("auto")
        except ImportError as e:
            raise ImportError(f"--format parquet needs pyarrow: pip install pyarrow ({e})") from e
    tables: Dict[str, pd.DataFrame] = {"runs": load(db, config=config)}   # first: a bad database leaves no folder
    os.makedirs(out, exist_ok=True)
    with closing(_connect(db)) as con:
        for name, sql in _LONG.items():
            tables[name] = pd.read_sql_query(sql, con)
    units = tables["runs"].attrs.get("units", {})
    written: Dict[str, str] = {}
    for name, df in tables.items():
        path = os.path.join(out, f"{name}.{fmt}")
        tmp = path + ".tmp"  # a failed write leaves no half file under the final name
        if fmt == "csv":
            df.to_csv(tmp, index=False)
        else:
            # Mixed-type config columns (a key that is a number in one run, a list in another)
            # would make Arrow refuse the column: object columns are written as text.
            clean = df.copy()
            for c in clean.columns:
                if clean[c].dtype == object:
                    clean[c] = clean[c].map(lambda v: v if v is None or isinstance(v, str) else str(v))
            if name == "runs":
                clean.attrs = {}
            clean.to_parquet(tmp, index=False)
        os.replace(tmp, path)
        written[name] = path
    # The metrics' units, which the wide runs table cannot carry in its cells.
    upath = os.path.join(out, f"units.{fmt}")
    udf = pd.DataFrame(sorted(units.items()), columns=["metric", "unit"])
    (udf.to_csv(upath, index=False) if fmt == "csv" else udf.to_parquet(upath, index=False))
    written["units"] = upath
    return written
