# SPDX-License-Identifier: Apache-2.0
"""Sweeps: the smoke spec runs completely, a killed sweep resumes to exactly one whole row set per
configuration, failed runs are stored with their error, Dask gives the same rows as the local pool."""
import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

import indexsim
from conftest import SMOKE


def _rows(db):
    """Everything a run stores except when and how long it took (wall_s, created_at)."""
    con = sqlite3.connect(db)
    try:
        runs = con.execute("SELECT key, config, hardware, workload, techniques, seed, status, error, step_ns, "
                           "roofline_ns FROM runs ORDER BY key").fetchall()
        metrics = con.execute("SELECT * FROM metrics ORDER BY run, name").fetchall()
        kernels = con.execute("SELECT * FROM kernels ORDER BY run, id").fetchall()
        comps = con.execute("SELECT * FROM components ORDER BY run, unit, statistic").fetchall()
    finally:
        con.close()
    return runs, metrics, kernels, comps


def test_smoke_sweep_stores_every_point_once_with_status_ok(smoke_db):
    # The spec: 2 presets × 3 contexts − 1 skipped = 5 runs.
    plan = indexsim.plan(str(SMOKE), smoke_db)
    assert len(plan) == 5
    assert all(r["done"] for r in plan)
    counts = indexsim.row_counts(smoke_db)
    assert sorted(counts["key"]) == sorted(r["key"] for r in plan)
    assert (counts["status"] == "ok").all()
    assert (counts["metrics"] > 0).all() and (counts["kernels"] > 0).all() and (counts["components"] > 0).all()


def test_rerun_skips_what_is_stored(smoke_db):
    res = indexsim.sweep(str(SMOKE), smoke_db, workers=2, quiet=True)
    assert res.ok == 5 and res.pending == 0
    assert indexsim.row_counts(smoke_db)["key"].is_unique


def test_sweep_killed_with_sigkill_resumes_to_one_whole_row_set_per_configuration(exe, smoke_db, tmp_path):
    # Kill -9 the sweep once at least one run is stored and others are in flight; the rerun must
    # end with the same rows (per table, per run) as the uninterrupted smoke sweep.
    db = str(tmp_path / "killed.sqlite")
    proc = subprocess.Popen([exe, "sweep", str(SMOKE), "--db", db, "--workers", "2", "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    stored = 0
    while time.time() < deadline and proc.poll() is None:
        if os.path.exists(db):
            try:
                con = sqlite3.connect(db)
                stored = con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
                con.close()
            except sqlite3.OperationalError:
                stored = 0
            if stored >= 1:
                break
        time.sleep(0.05)
    killed_midway = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert killed_midway, "the sweep finished before it could be killed"
    con = sqlite3.connect(db)
    before = con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    con.close()
    assert 1 <= before < 5
    res = indexsim.sweep(str(SMOKE), db, workers=2, quiet=True)
    assert (res.total, res.ok) == (5, 5)
    counts = indexsim.row_counts(db).set_index("key")
    reference = indexsim.row_counts(smoke_db).set_index("key")
    assert counts.equals(reference)
    assert _rows(db) == _rows(smoke_db)


def test_failed_run_is_stored_with_its_error_and_the_sweep_goes_on(exe, tmp_path):
    # Tensors that do not fit fail inside the run (placement comes after the plan's resolve()).
    spec = {"name": "fail", "base": {"hardware": "h200", "workload": "glm-5", "fast": True,
                                     "step": {"context": 4_000_000, "batch": 8},
                                     "sets": ["workload.model.max_position_embeddings=4000000"]},
            "axes": {"hardware": ["h100", "h200"]}}
    db = str(tmp_path / "fail.sqlite")
    res = indexsim.sweep(spec, db, workers=2, quiet=True)
    assert (res.total, res.failed) == (2, 2)
    df = indexsim.load(db)
    assert (df["status"] == "failed").all()
    assert df["error"].str.contains("does not fit").all()


def test_a_missing_trace_fails_the_plan_naming_the_file(exe, tmp_path):
    # The plan keys a trace run by the file's content hash, so it reads the file before any run.
    spec = {"base": {"hardware": "h200", "trace": str(tmp_path / "missing.itr"), "fast": True},
            "axes": {"hardware": ["h100", "h200"]}}
    with pytest.raises(indexsim.IndexSimError, match="missing.itr"):
        indexsim.plan(spec)


def test_unknown_axis_path_fails_before_any_run_naming_the_path(exe, tmp_path):
    spec = {"base": {"hardware": "h200", "workload": "glm-5", "fast": True},
            "axes": {"hardware.memory.hbm.stackz": [4, 6]}}
    db = tmp_path / "bad.sqlite"
    with pytest.raises(RuntimeError, match="hardware.memory.hbm.stackz"):
        indexsim.plan(spec)
    import yaml
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(spec))
    proc = subprocess.run([exe, "sweep", str(path), "--db", str(db)], capture_output=True, text=True)
    assert proc.returncode != 0
    assert "hardware.memory.hbm.stackz" in proc.stderr
    assert not db.exists()


def test_dask_local_cluster_gives_the_same_rows_as_the_local_pool(smoke_db, tmp_path):
    distributed = pytest.importorskip("distributed")
    db = str(tmp_path / "dask.sqlite")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        res = indexsim.sweep(str(SMOKE), db, cluster=cluster)
    assert (res.total, res.ok) == (5, 5)
    assert not os.path.exists(db + ".shards")
    assert _rows(db) == _rows(smoke_db)


def test_a_trace_run_is_keyed_by_the_traces_contents_not_its_path(exe, tmp_path):
    import shutil
    src = Path(__file__).resolve().parents[1] / "data" / "traces" / "glm-5.3-flash-decode-3k.itr"
    a, b = tmp_path / "a.itr", tmp_path / "b.itr"
    shutil.copy(src, a)
    shutil.copy(src, b)

    def key(path):
        return indexsim.plan({"base": {"hardware": "h200", "trace": str(path), "fast": True},
                              "axes": {"hardware": ["h200"]}})[0]["key"]

    assert key(a) == key(b)  # the same trace anywhere is the same run
    before = key(a)
    data = bytearray(a.read_bytes())
    data[-1] ^= 0xFF  # another trace under the same name (the reader would find the block's CRC wrong)
    a.write_bytes(bytes(data))
    assert key(a) != before


def test_stored_runs_of_another_code_version_are_stale_kept_or_rerun(smoke_db, tmp_path):
    import shutil
    import sqlite3
    db = str(tmp_path / "stale.sqlite")
    shutil.copy(smoke_db, db)
    con = sqlite3.connect(db)
    con.execute("UPDATE runs SET code_version = '0.0.1+000000000000'")
    con.commit()
    con.close()
    runs = indexsim.plan(str(SMOKE), db)
    assert all(r["stale"] and r["done"] for r in runs)
    assert not any(r["done"] for r in indexsim.plan(str(SMOKE), db, rerun_stale=True))
    res = indexsim.sweep(str(SMOKE), db, workers=2, quiet=True, rerun_stale=True)
    assert res.ok == res.total
    assert not any(r["stale"] for r in indexsim.plan(str(SMOKE), db))


def test_two_sweeps_on_one_database_share_its_points(exe, tmp_path):
    """Two sweeps of the smoke spec started together on one new file: each point is simulated by
    one of them (a sweep claims a point before it runs it, and leaves the others' claims and
    results alone), every point ends stored ok once, and no claim is left behind."""
    db = str(tmp_path / "shared.sqlite")
    subprocess.run([exe, "sweep", str(SMOKE), "--db", db, "--dry-run"], check=True, capture_output=True)  # creates nothing
    cmd = [exe, "sweep", str(SMOKE), "--db", db, "--workers", "1"]
    a = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    b = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    outs = [p.communicate(timeout=600) for p in (a, b)]
    assert a.returncode == 0 and b.returncode == 0, outs
    ran = []
    for out, _ in outs:
        line = next(l for l in out.splitlines() if l.startswith("sweep "))
        ran.append(int(line.split(" ran (")[0].rsplit(" ", 1)[1]))
    assert sum(ran) == 5, outs  # 5 points, each simulated once, by one sweep or the other
    con = sqlite3.connect(db)
    try:
        assert con.execute("SELECT COUNT(*) FROM runs WHERE status='ok'").fetchone()[0] == 5
        assert con.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0
    finally:
        con.close()


def _shared_spec():
    """The smoke model, one preset, two techniques by two contexts, its points sharing their seed's
    segment memos: the seed is the first point (baseline, 1024), the other three start from it."""
    import yaml
    spec = yaml.safe_load(SMOKE.read_text())
    spec.pop("constraints")
    spec["name"] = "smoke-shared"
    spec["share_segments"] = True
    spec["axes"] = {"hardware": ["h200"], "techniques": ["baseline", "indexshare"],
                    "step.context": [1024, 2048]}
    return spec


def test_shared_segments_record_their_seed_and_do_not_depend_on_the_worker_count(exe, tmp_path):
    spec = _shared_spec()
    one, two = str(tmp_path / "one.sqlite"), str(tmp_path / "two.sqlite")
    assert indexsim.sweep(spec, one, workers=1, quiet=True).ok == 4
    assert indexsim.sweep(spec, two, workers=2, quiet=True).ok == 4
    assert _rows(one) == _rows(two)
    con = sqlite3.connect(one)
    try:
        configs = [json.loads(c) for (c,) in con.execute("SELECT config FROM runs")]
        stored = dict(con.execute("SELECT key, step_ns FROM runs").fetchall())
    finally:
        con.close()
    seeds = [c for c in configs if "segments_from" not in c]
    assert len(seeds) == 1 and seeds[0]["step"]["context"] == 1024
    assert seeds[0]["techniques"]["name"] == "baseline"
    seed_key = indexsim.plan(spec)[0]["key"]
    assert sorted(c.get("segments_from", "") for c in configs) == ["", seed_key, seed_key, seed_key]
    memos = list(Path(one + ".segments").glob("*.seg"))
    assert len(memos) == 1
    # A member run by hand from the seed's file is the stored run, and takes more of its kernels
    # from memos than the same point alone (whose first layer's GEMMs it simulates).
    member = next(r for r in indexsim.plan(spec) if r["point"]["step.context"] == "2048")
    args = [exe, "run"] + member["args"] + ["--json", "--kernels"]

    def reused(extra):
        out = json.loads(subprocess.run(args + extra, check=True, capture_output=True, text=True).stdout)
        return out, sum(k["simulated"] == "reused" for k in out["kernels"])
    shared, reused_shared = reused(["--segments-from", str(memos[0])])
    alone, reused_alone = reused([])
    assert shared["key"] == member["key"] and shared["step_ns"] == stored[member["key"]]
    assert alone["key"] != member["key"] and "segments_from" not in alone["config"]
    assert reused_shared > reused_alone


def test_a_shared_point_alone_plans_its_seed_and_a_lost_memo_file_is_remade(exe, tmp_path):
    spec = _shared_spec()
    db = str(tmp_path / "shared.sqlite")
    runs = indexsim.plan(spec)
    member = next(r for r in runs if r["point"]["step.context"] == "2048" and r["point"]["techniques"] == "indexshare")
    proc = subprocess.run([exe, "sweep", _write(spec, tmp_path), "--db", db, "--select", str(member["index"]),
                           "--quiet"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert sorted(indexsim.row_counts(db)["key"]) == sorted([runs[0]["key"], member["key"]])
    before = _rows(db)
    # The member is lost with the memo file: the rerun remakes the seed's memos without storing it again.
    con = sqlite3.connect(db)
    for t in ("metrics", "kernels", "components"):
        con.execute(f"DELETE FROM {t} WHERE run=?", (member["key"],))
    con.execute("DELETE FROM runs WHERE key=?", (member["key"],))
    con.commit()
    con.close()
    for f in Path(db + ".segments").glob("*.seg"):
        f.unlink()
    proc = subprocess.run([exe, "sweep", _write(spec, tmp_path), "--db", db, "--select", str(member["index"])],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "1 already stored, 1 ran" in proc.stdout
    assert _rows(db) == before


def _write(spec, tmp_path):
    import yaml
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return str(path)
