# SPDX-License-Identifier: Apache-2.0
"""`indexsim export` and `indexsim diff` (analysis/indexsim/export.py, diff.py), and the Python
front end that serves them beside the executable's commands (analysis/indexsim/__main__.py)."""
import os
import sqlite3
import subprocess
import sys

import pandas as pd
import pytest

from conftest import REPO


def _cli(*args, cwd=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "analysis"), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "indexsim", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300)


def _rows(db, table):
    return sqlite3.connect(db).execute(f"SELECT count(*) FROM {table}").fetchone()[0]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_writes_every_table_with_every_row(smoke_db, tmp_path, fmt):
    if fmt == "parquet":
        pytest.importorskip("pyarrow", reason="pip install pyarrow (scripts/requirements.txt)")
    r = _cli("export", "--db", smoke_db, "--format", fmt, "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    read = pd.read_csv if fmt == "csv" else pd.read_parquet
    runs = read(tmp_path / "out" / f"runs.{fmt}")
    assert len(runs) == _rows(smoke_db, "runs") and {"key", "step_us", "hardware.name"} <= set(runs.columns)
    for table in ("metrics", "kernels", "components"):
        assert len(read(tmp_path / "out" / f"{table}.{fmt}")) == _rows(smoke_db, table), table
    units = read(tmp_path / "out" / f"units.{fmt}")
    assert dict(zip(units["metric"], units["unit"]))["tokens_per_second"] == "tokens/s"
    assert not list((tmp_path / "out").glob("*.tmp"))


def test_export_of_a_missing_database_is_a_one_line_error(tmp_path):
    r = _cli("export", "--db", str(tmp_path / "none.sqlite"), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "none.sqlite" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_diff_of_a_database_with_itself_finds_nothing_moved(smoke_db):
    r = _cli("diff", smoke_db, smoke_db)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count(" vs ") == _rows(smoke_db, "runs")
    assert "metrics: 0 of" in r.stdout and "kernels that moved" not in r.stdout


def test_diff_of_two_runs_gives_the_deltas_of_their_stored_figures(smoke_db):
    from indexsim.diff import RunRef, kernel_diff, metric_diff
    con = sqlite3.connect(smoke_db)
    (a, sa), (b, sb) = con.execute("SELECT key, step_ns FROM runs ORDER BY step_ns LIMIT 2").fetchall()[:1] + \
        con.execute("SELECT key, step_ns FROM runs ORDER BY step_ns DESC LIMIT 1").fetchall()
    md = metric_diff(RunRef(smoke_db), a, RunRef(smoke_db), b)
    # delta = B - A, and the change is in per cent of A
    assert md.loc["step_us", "delta"] == pytest.approx((sb - sa) / 1e3)
    assert md.loc["step_us", "delta_percent"] == pytest.approx(100 * (sb - sa) / sa)
    kd = kernel_diff(RunRef(smoke_db), a, RunRef(smoke_db), b, top=3)
    assert len(kd) == 3 and kd["delta_us"].abs().is_monotonic_decreasing
    r = _cli("diff", f"{smoke_db}:{a[:8]}", f"{smoke_db}:{b[:8]}", "--top", "3")
    assert r.returncode == 0 and "step_us" in r.stdout and "kernels that moved most" in r.stdout, r.stdout


def test_the_front_end_forwards_the_executables_commands(exe):
    r = _cli("--version")
    assert r.returncode == 0 and r.stdout.startswith("indexsim "), (r.stdout, r.stderr)
    h = _cli("--help")
    assert h.returncode == 0 and "run\t" in h.stdout and "export\t" in h.stdout and "diff\t" in h.stdout
    bad = _cli("run", "--hardware", "h200")
    assert bad.returncode == 2 and "give exactly one of --workload and --trace" in bad.stderr
    for cmd in ("export", "diff", "report"):
        assert _cli(cmd, "--help").returncode == 0
