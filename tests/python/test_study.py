# SPDX-License-Identifier: Apache-2.0
"""`indexsim study`: the accuracy column follows each run's techniques config (editing a techniques
file changes its figure), with the smoke sweep's tiny GLM-5-shaped model so that runs take a second."""
import json
import sqlite3
import subprocess
from pathlib import Path

from conftest import SMOKE  # noqa: F401  (the tiny model's sets below are the smoke sweep's)

TINY = [
    "workload.model.num_layers=2",
    "workload.layers=[{first: 0, last: 1, attention: dsa, indexer: full, mlp: dense}]",
    "workload.model.vocab_size=2048",
    "workload.model.hidden_size=1024",
    "workload.mlp.dense_intermediate_size=1024",
    "workload.attention.num_heads=8",
    "workload.attention.q_lora_rank=512",
]


def _recall_rows(db):
    """(resolved config, recall) of every run the study stored."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT r.config, m.value FROM runs r JOIN metrics m ON m.run = r.key "
                           "WHERE m.name = 'accuracy_recall_at_k'").fetchall()
    finally:
        con.close()
    return [(json.loads(c), v) for c, v in rows]


def _recalls(db):
    """Each run's recall, named by the technique sections its resolved config enables (with the
    pooling ratio): the study stores configs, not file names."""
    out = {}
    for config, value in _recall_rows(db):
        tech = config["techniques"]
        on = sorted(s for s in ("index_pool", "dim_prune", "index_share", "quantize") if s in tech)
        name = "+".join(on) or "baseline"
        if on == ["index_pool"]:
            name = f"pool{tech['index_pool']['ratio']}"
        out[name] = value
    return out


def test_study_accuracy_is_measured_with_each_runs_own_technique_parameters(exe, tmp_path):
    pool2 = tmp_path / "pool2.yaml"
    pool2.write_text("base: indexpool\nname: pool2\ndescription: IndexPool 2:1\nindex_pool:\n  ratio: 2\n")
    sets = "\n".join(f"  - {s!r}" if "[" in s else f"  - {s}" for s in TINY)
    study = tmp_path / "study.yaml"
    study.write_text(
        "hardware: h200\nworkloads: [glm-5]\ncontexts: [4096]\n"
        f"techniques: [baseline, indexpool, {pool2}, all]\n"
        "batch: 1\nqueries: 1\nseed: 1\nfast: true\nrecall_k: 64\n"
        f"sets:\n{sets}\n")
    db = str(tmp_path / "study.sqlite")
    out = subprocess.run([exe, "study", str(study), "--db", db], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    rec = _recalls(db)
    assert len(rec) == 4, rec
    # The exact indexer selects its own top-k: recall 1 by definition.
    assert abs(rec["baseline"] - 1.0) < 1e-12
    # Pooling 2 tokens per entry keeps more of the keys than 4 per entry, so it loses less recall;
    # both lose some. Equal figures would mean the ratio in the file was not what was measured.
    assert 0 < rec["pool4"] < rec["pool2"] < 1.0
    # Several techniques at once are one chain (pool 4:1, prune, FP8, IndexShare selecting from an
    # earlier layer's keys as the chain leaves them): it keeps less than pooling alone.
    assert 0 < rec["dim_prune+index_pool+index_share+quantize"] < rec["pool4"]

    # Results carry the names of the presets they were made from: load() groups by them.
    import indexsim
    df = indexsim.load(db)
    assert sorted(df["techniques"]) == sorted(["baseline", "indexpool", "pool2", "all"]), list(df["techniques"])
    assert set(df["hardware"]) == {"h200"}
    con = sqlite3.connect(db)
    try:
        names = {json.loads(c)["hardware"]["name"] for (c,) in con.execute("SELECT config FROM runs")}
    finally:
        con.close()
    assert names == {"h200"}


def _study_file(tmp_path, techniques="[baseline, indexpool]", contexts="[4096]", recall_k=64, extra=""):
    sets = "\n".join(f"  - {s!r}" if "[" in s else f"  - {s}" for s in TINY)
    study = tmp_path / "reuse.yaml"
    study.write_text(f"hardware: h200\nworkloads: [glm-5]\ncontexts: {contexts}\ntechniques: {techniques}\n"
                     f"batch: 1\nqueries: 1\nseed: 1\nfast: true\nrecall_k: {recall_k}\n{extra}sets:\n{sets}\n")
    return str(study)


def _table(stdout):
    # The table rows: everything before the summary line, with no figure of wall time in them.
    return [l for l in stdout.splitlines() if l.startswith("glm-5")]


def test_a_rerun_of_a_study_reuses_its_stored_runs_and_prints_the_same_table(exe, tmp_path):
    study, db = _study_file(tmp_path), str(tmp_path / "reuse.sqlite")
    first = subprocess.run([exe, "study", study, "--db", db], capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    assert "2 simulated, 0 reused" in first.stdout, first.stdout
    again = subprocess.run([exe, "study", study, "--db", db], capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert "0 simulated, 2 reused" in again.stdout, again.stdout
    assert _table(again.stdout) == _table(first.stdout) and len(_table(first.stdout)) == 2
    rows = sqlite3.connect(db).execute("SELECT count(*) FROM runs").fetchone()[0]
    assert rows == 2
    # --rerun simulates again, into the same keys: still two rows, the same table.
    forced = subprocess.run([exe, "study", study, "--db", db, "--rerun"], capture_output=True, text=True, timeout=600)
    assert "2 simulated, 0 reused" in forced.stdout and _table(forced.stdout) == _table(first.stdout)


def test_a_study_reports_runs_of_another_code_version_as_stale(exe, tmp_path):
    study, db = _study_file(tmp_path, "[baseline]"), str(tmp_path / "stale.sqlite")
    assert subprocess.run([exe, "study", study, "--db", db], capture_output=True, timeout=600).returncode == 0
    con = sqlite3.connect(db)
    con.execute("UPDATE runs SET code_version = '0.0.1+000000000000'")
    con.commit()
    con.close()
    kept = subprocess.run([exe, "study", study, "--db", db], capture_output=True, text=True, timeout=600)
    assert "1 reused" in kept.stdout and "1 stored by another code version" in kept.stdout, kept.stdout
    redo = subprocess.run([exe, "study", study, "--db", db, "--rerun-stale"], capture_output=True, text=True, timeout=600)
    assert "1 simulated" in redo.stdout, redo.stdout
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.split()[1]
    assert sqlite3.connect(db).execute("SELECT code_version FROM runs").fetchall() == [(version,)]


def test_a_whole_prefill_is_stored_with_unique_kernel_ids(exe, tmp_path):
    # Each simulated chunk numbers its kernels from 0; the prefill's record holds several chunks'
    # kernels, and storing it failed on the kernels table's key (run, id) after the simulation.
    db = tmp_path / "prefill.sqlite"
    workload = str(Path(__file__).resolve().parents[1] / "data" / "workloads" / "tiny-dsa.yaml")
    r = subprocess.run([exe, "run", "--hardware", "h200", "--workload", workload, "--phase", "prefill", "--context",
                        "1024", "--chunk", "64", "--fast", "--db", str(db)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-400:]
    con = sqlite3.connect(db)
    (runs,), = con.execute("SELECT count(*) FROM runs").fetchall()
    kernels, distinct, chunks = con.execute("SELECT count(*), count(DISTINCT id), count(DISTINCT substr(name, 1, instr(name, '.'))) "
                                            "FROM kernels").fetchone()
    assert runs == 1 and kernels == distinct and chunks > 1, (runs, kernels, distinct, chunks)


def test_study_extra_rows_run_on_their_own_hardware_against_the_same_baseline(exe, tmp_path):
    sets = "\n".join(f"  - {s!r}" if "[" in s else f"  - {s}" for s in TINY)
    study = tmp_path / "study.yaml"
    study.write_text(
        "hardware: h200\nworkloads: [glm-5]\ncontexts: [4096]\ntechniques: [baseline]\n"
        "extra_rows:\n  - {techniques: indexshare-npu, hardware: h200-npu}\n"
        "batch: 1\nqueries: 1\nseed: 1\nfast: true\nrecall_k: 64\n"
        f"sets:\n{sets}\n")
    db = str(tmp_path / "study.sqlite")
    out = subprocess.run([exe, "study", str(study), "--db", db], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    rows = [l for l in out.stdout.splitlines() if l.startswith("glm-5")]
    assert len(rows) == 2, out.stdout
    assert "indexshare-npu" in rows[1] and "failed" not in rows[1], rows[1]
    assert rows[1].split()[-2] != "n/a", rows[1]  # a speed-up over the h200 baseline
    con = sqlite3.connect(db)
    try:
        hw = sorted(r[0] for r in con.execute("SELECT hardware FROM runs"))
        npu = con.execute("SELECT m.value FROM metrics m JOIN runs r ON m.run = r.key "
                          "WHERE r.hardware = 'h200-npu' AND m.name = 'npu_kernels'").fetchone()
    finally:
        con.close()
    assert hw == ["h200", "h200-npu"], hw
    assert npu is not None and npu[0] == 1.0, npu


def test_study_accuracy_at_each_runs_budget_ratio_on_the_causal_fixture(exe, tmp_path):
    # accuracy_fixture: causal, recall_at_context_ratio: k / 8192 = recall_k / context. With recall_k
    # 1024: k = 2048 at 4096 and 64 at 131072. Pooled keys rank the few best tokens worse than many
    # (docs/accuracy.md: 4:1 pooling 0.65 at k = 128, 0.83 at 2048); both stay far above the random
    # floor (k / n: 0.011 at k = 64).
    study = _study_file(tmp_path, contexts="[4096, 131072]", recall_k=1024,
                        extra="accuracy_fixture: causal\nrecall_at_context_ratio: true\n")
    db = str(tmp_path / "study.sqlite")
    out = subprocess.run([exe, "study", study, "--db", db], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    assert "recall@k with k / 8192 = 1024 / context" in out.stdout
    rows = _recall_rows(db)
    pooled = {c["step"]["context"]: v for c, v in rows if "index_pool" in c["techniques"]}
    exact = [v for c, v in rows if "index_pool" not in c["techniques"]]
    assert exact == [1.0, 1.0]
    assert 0.1 < pooled[131072] < pooled[4096] - 0.05 and pooled[4096] < 1.0, pooled


def test_study_measures_what_its_fixture_cannot_express_on_the_fallback_fixture(exe, tmp_path):
    # IndexPool 4:1 along vectors needs four vectors a token; the causal fixture stores two, the
    # encoder fixture four. With accuracy_fallback_fixture the row is measured there (k / 4096 =
    # 1024 / 4096: k = 1024), marked *, and the run records that it was.
    study = tmp_path / "fallback.yaml"
    study.write_text("hardware: h200\nworkloads: [glm-5.3-flash-4v]\ncontexts: [4096]\n"
                     "techniques: [baseline, indexpool-vectors]\nbatch: 1\nqueries: 1\nseed: 1\nfast: true\n"
                     "recall_k: 1024\naccuracy_fixture: causal\nrecall_at_context_ratio: true\n"
                     "accuracy_fallback_fixture: vectors\n")
    db = str(tmp_path / "fallback.sqlite")
    out = subprocess.run([exe, "study", str(study), "--db", db], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    rows = {l.split()[2]: l.split()[-1] for l in out.stdout.splitlines() if l.startswith("glm-5.3-flash-4v")}
    assert rows["baseline"] == "1.0000", out.stdout
    assert rows["indexpool-vectors"].endswith("*"), out.stdout
    assert 0.25 < float(rows["indexpool-vectors"][:-1]) < 1.0, out.stdout  # above the floor k / n = 0.25
    assert "* accuracy measured on tests/data/vectors" in out.stdout
    con = sqlite3.connect(db)
    try:
        flags = con.execute("SELECT value FROM metrics WHERE name = 'accuracy_on_fallback_fixture'").fetchall()
    finally:
        con.close()
    assert flags == [(1.0,)], flags


def test_a_workloads_own_contexts_replace_the_studys(exe, tmp_path):
    # workload_contexts: {glm-5: [4096]} runs glm-5 at 4096 only, not at the study's 8192; a name that
    # is not one of the study's workloads is refused, naming the key and the name.
    study = _study_file(tmp_path, techniques="[baseline]", contexts="[8192]",
                        extra="workload_contexts: {glm-5: [4096]}\n")
    db = str(tmp_path / "own.sqlite")
    out = subprocess.run([exe, "study", study, "--db", db], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    contexts = [l.split()[1] for l in _table(out.stdout)]
    assert contexts == ["4096"], out.stdout
    bad = _study_file(tmp_path, techniques="[baseline]", extra="workload_contexts: {glm-9: [4096]}\n")
    out = subprocess.run([exe, "study", bad, "--db", db], capture_output=True, text=True, timeout=600)
    assert out.returncode != 0
    assert "workload_contexts" in out.stderr and "glm-9" in out.stderr, out.stderr


def test_indexshare_costs_no_recall_on_a_model_that_already_shares(exe, tmp_path):
    # A model whose own layers reuse top-k (GLM-5.2's `indexer: shared`) is measured against its own
    # selection: the IndexShare technique selects nothing it would not (recall 1), while on a model
    # of full layers IndexShare's reuse costs recall.
    def run(layers, name):
        sets = [s for s in TINY if not s.startswith("workload.layers=")] + [f"workload.layers={layers}"]
        lines = "\n".join(f"  - {s!r}" if "[" in s else f"  - {s}" for s in sets)
        study = tmp_path / f"{name}.yaml"
        study.write_text("hardware: h200\nworkloads: [glm-5]\ncontexts: [4096]\ntechniques: [baseline, indexshare]\n"
                         f"batch: 1\nqueries: 1\nseed: 1\nfast: true\nrecall_k: 64\nsets:\n{lines}\n")
        out = subprocess.run([exe, "study", str(study), "--db", str(tmp_path / f"{name}.sqlite")],
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr
        return {l.split()[2]: float(l.split()[-1]) for l in _table(out.stdout)}
    shared = run("[{first: 0, last: 1, attention: dsa, indexer: shared, mlp: dense}, {first: 0, last: 0, indexer: full}]",
                 "shared")
    full = run("[{first: 0, last: 1, attention: dsa, indexer: full, mlp: dense}]", "full")
    assert shared["indexshare"] == 1.0, shared
    assert full["indexshare"] < 1.0, full


def test_a_study_reports_time_to_first_token_per_technique_and_reuses_it(exe, tmp_path):
    # The prefill section: one prompt's whole prefill per technique, its speed-up over the prompt's
    # baseline (baseline TTFT / technique TTFT), stored under the prefill's key and reused.
    tiny = str(Path(__file__).resolve().parents[1] / "data" / "workloads" / "tiny-dsa.yaml")
    study = tmp_path / "study.yaml"
    study.write_text(
        f"hardware: h200\nworkloads: [{tiny}]\ncontexts: [256]\ntechniques: [baseline]\n"
        "batch: 1\nqueries: 1\nseed: 1\nfast: true\nrecall_k: 64\n"
        f"prefill: {{workload: {tiny}, context: 256, chunk: 64, sampled_chunks: 0, techniques: [baseline, indexshare]}}\n")
    db = str(tmp_path / "study.sqlite")
    out = subprocess.run([exe, "study", str(study), "--db", db], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    ttft = out.stdout.split("# time to first token")[1].split("\n\n")[0].splitlines()[2:]
    rows = {line.split()[2]: line.split() for line in ttft}
    assert set(rows) == {"baseline", "indexshare"}, out.stdout
    base, share = float(rows["baseline"][3]), float(rows["indexshare"][3])
    assert rows["baseline"][4] == "1.000" and abs(float(rows["indexshare"][4]) - base / share) < 2e-3
    # The same TTFT as `run --phase prefill` with the same settings.
    run = subprocess.run([exe, "run", "--hardware", "h200", "--workload", tiny, "--phase", "prefill", "--context", "256",
                          "--chunk", "64", "--sampled-chunks", "0", "--techniques", "indexshare", "--fast", "--json"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert abs(json.loads(run.stdout)["metrics"]["ttft"]["value"] / 1e3 - share) <= 0.0005 + 1e-9  # printed to 3 decimals
    again = subprocess.run([exe, "study", str(study), "--db", db], capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and "3 runs: 0 simulated, 3 reused" in again.stdout, again.stdout
    assert [l for l in again.stdout.splitlines() if "tiny-dsa" in l] == [l for l in out.stdout.splitlines() if "tiny-dsa" in l]
