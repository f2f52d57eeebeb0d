# SPDX-License-Identifier: Apache-2.0
"""load() columns, run(), the plots (each writes a non-empty file) and the report."""
import os

import pandas as pd
import pytest

import indexsim
from indexsim import plots
from indexsim.run import run_args
from conftest import SMOKE


def test_load_has_a_row_per_run_with_axes_and_metrics_as_columns(smoke_db):
    df = indexsim.load(smoke_db)
    assert len(df) == 5 and df["key"].is_unique
    # The axes of the smoke spec vary; the flattened config shows them under their config paths.
    assert set(df["hardware"]) == {"h100", "h200"}
    assert sorted(df["step.context"].unique()) == [1024, 2048, 4096]
    assert "hardware.memory.hbm.stacks" in df.columns  # differs between the presets (H100 5, H200 6)
    for m in ("step_time", "tokens_per_second", "bytes_read", "footprint_kv_cache"):
        assert m in df.columns, m
    assert df.attrs["units"]["step_time"] == "us"
    # step_us is the run's step_ns / 1e3, and the step_time metric says the same.
    assert (df["step_us"] - df["step_time"]).abs().max() < 1e-9 * df["step_us"].max()
    # A longer context reads more: bytes_read grows with step.context on each preset.
    for _, part in df.sort_values("step.context").groupby("hardware"):
        assert part["bytes_read"].is_monotonic_increasing
    assert len(indexsim.load(smoke_db, config="all").columns) > len(df.columns)


def test_run_returns_result_with_kernels_and_the_same_key_as_the_sweep(exe, smoke_db):
    plan = indexsim.plan(str(SMOKE))
    first = plan[0]
    args = first["args"]
    sets = [args[i + 1] for i, a in enumerate(args) if a == "--set"]
    r = indexsim.run(hardware=first["point"]["hardware"], workload="glm-5", context=int(first["point"]["step.context"]),
                     fast=True, sets=sets)
    assert r.key == first["key"]
    assert r.status == "ok" and r.step_us > 0
    assert r.step_us >= r.roofline_us  # a simulated time below the roofline bound is a bug
    assert {"name", "kind", "layer", "start_ns", "end_ns"} <= set(r.kernels.columns)
    assert r.metrics["step_time"] == pytest.approx(r.step_us)
    assert r.config["step"]["context"] == int(first["point"]["step.context"])
    stored = indexsim.load(smoke_db).set_index("key")
    assert stored.loc[r.key, "step_us"] == r.step_us  # deterministic: bit-identical


def test_run_reuse_false_simulates_every_kernel_and_records_the_mode(exe):
    # Kernel reuse (both modes) makes a repeated kernel that runs alone take its twin's duration;
    # reuse=False passes --no-reuse, so no kernel is "reused" and the run's mode says so.
    args = run_args(hardware="h200", workload="glm-5", context=1024, fast=True, reuse=False)
    assert args[-2:] == ["--fast", "--no-reuse"]
    # Four layers (one dense, three MoE) keep the run without reuse short.
    sets = ["workload.model.num_layers=4",
            "workload.layers=[{first: 0, last: 3, attention: dsa, indexer: full, mlp: moe}, {first: 0, last: 0, mlp: dense}]"]
    a = indexsim.run(hardware="h200", workload="glm-5", context=1024, fast=True, sets=sets)
    b = indexsim.run(hardware="h200", workload="glm-5", context=1024, fast=True, sets=sets, reuse=False)
    assert (a.kernels["simulated"] == "reused").any()
    assert not (b.kernels["simulated"] == "reused").any()
    assert a.config["mode"] == "fast" and b.config["mode"] == "fast-no-reuse"
    assert a.key != b.key
    # Each kernel says how much host time the simulator spent on it: none on a reused one, some on
    # a simulated one, and no more in all than the run took.
    assert (a.kernels.loc[a.kernels["simulated"] == "reused", "wall_s"] == 0).all()
    assert (a.kernels.loc[a.kernels["simulated"] != "reused", "wall_s"] > 0).all()
    assert b.kernels["wall_s"].sum() <= b.wall_s


def test_run_steps_repeats_the_decode_step_on_one_hardware_state(exe):
    # steps=N passes --steps N: the first step is the one-step run, the result is the last's.
    assert run_args(hardware="h200", workload="glm-5", steps=3)[-2:] == ["--steps", "3"]
    sets = ["workload.model.num_layers=2",
            "workload.layers=[{first: 0, last: 1, attention: dsa, indexer: full, mlp: dense}]"]
    one = indexsim.run(hardware="h200", workload="glm-5", context=2048, fast=True, sets=sets)
    three = indexsim.run(hardware="h200", workload="glm-5", context=2048, fast=True, sets=sets, steps=3)
    assert three.metrics["steps"] == 3
    assert three.metrics["step_time_first"] == one.metrics["step_time"]
    assert three.config["steps"] == 3 and "steps" not in one.config


def test_pareto_front_keeps_the_points_nobody_beats_in_both():
    # (1,5) (2,3) (3,4) (4,1): (3,4) is beaten by (2,3) in both; the rest form the front.
    front = plots.pareto_front([1, 2, 3, 4], [5, 3, 4, 1])
    assert list(front) == [0, 1, 3]


@pytest.mark.parametrize("ext", ["png", "svg"])
def test_each_plot_writes_a_non_empty_file(smoke_db, tmp_path, ext):
    df = indexsim.load(smoke_db)
    key = df.sort_values("step_us")["key"].iloc[-1]
    ks = indexsim.kernels(smoke_db, key)
    made = {
        "pareto": lambda p: plots.pareto(df, hue="hardware", out=p),
        "techniques": lambda p: plots.technique_bars(df.assign(techniques="baseline"), out=p),
        "heatmap": lambda p: plots.heatmap(df, "step.context", "hardware", out=p),
        "layers": lambda p: plots.layer_stack(ks, out=p),
        "timeline": lambda p: plots.timeline(ks, out=p),
    }
    for name, fn in made.items():
        path = tmp_path / f"{name}.{ext}"
        fn(str(path))
        assert path.stat().st_size > 1000, name
    plots.plt.close("all")


def test_report_writes_markdown_html_and_its_plots(smoke_db, tmp_path):
    import subprocess
    import sys
    out = tmp_path / "report"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(indexsim.__file__)), env.get("PYTHONPATH", "")])
    subprocess.run([sys.executable, "-m", "indexsim", "report", "--db", smoke_db, "--out", str(out)], check=True, env=env)
    md = (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    assert "5 runs (5 ok, 0 failed)" in md
    for stem in ("pareto", "heatmap", "layers", "timeline"):
        for ext in ("png", "svg"):
            f = out / f"{stem}.{ext}"
            assert f.stat().st_size > 1000, f
        assert f"{stem}.png" in md and f"{stem}.svg" in html


def test_a_study_heatmap_has_one_run_per_technique_workload_and_context():
    from indexsim.report import heatmap_grid
    df = _study_like()
    cells, x, y, caption = heatmap_grid(df, ["techniques", "workload", "step.context"])
    assert (x, y) == ("techniques", "workload @ context")
    assert cells.groupby([x, y]).size().max() == 1  # no cell averages runs
    assert "glm-5 @ 131072" in set(cells[y])
    fig = plots.heatmap(cells, x, y)
    assert "one run per cell" in fig.axes[0].get_title()
    plots.plt.close("all")


def test_report_axes_are_the_sweep_axes(smoke_db):
    from indexsim.report import _axes
    # Every hardware.* key follows the preset; step.context is the other axis of the spec.
    assert _axes(indexsim.load(smoke_db)) == ["hardware", "step.context"]


def test_trace_reader_is_re_exported():
    assert hasattr(indexsim.trace, "read") and hasattr(indexsim.trace, "TraceError")


def _study_like():
    import pandas as pd
    return pd.DataFrame({
        "status": ["ok"] * 4, "workload": ["glm-5"] * 4, "step.context": [131072, 131072, 1048576, 1048576],
        "techniques": ["baseline", "indexpool", "baseline", "indexpool"],
        "step_us": [100.0, 80.0, 400.0, 250.0], "roofline_us": [50.0, 40.0, 200.0, 120.0],
        "footprint_indexer_cache": [4.0 * 2**20, 1.0 * 2**20, 32.0 * 2**20, 8.0 * 2**20],
        "footprint_weights": [80.0 * 2**30] * 4})


def test_pareto_plots_the_indexer_cache_one_panel_per_context():
    df = _study_like()
    # The default footprint is the indexer cache's, not the sum with the weights every technique shares.
    assert list(plots.memory_bytes(df)) == list(df["footprint_indexer_cache"])
    assert list(plots.memory_bytes(df, "total")) == list(df["footprint_indexer_cache"] + df["footprint_weights"])
    fig = plots.pareto(df, hue="techniques")
    panels = [ax for ax in fig.axes if ax.get_visible()]
    # one workload: the panels are the contexts
    assert [ax.get_title() for ax in panels] == ["step.context=131072", "step.context=1048576"]
    ys = sorted(float(y) for y in panels[0].collections[0].get_offsets()[:, 1]) + \
        sorted(float(y) for y in panels[0].collections[1].get_offsets()[:, 1])
    assert ys == [4.0, 1.0]  # MiB: baseline then indexpool, in the 128K panel
    plots.plt.close("all")
    # The legend names every technique of every panel, not only the first panel's.
    extra = df.iloc[[0]].copy()
    extra["techniques"], extra["step.context"] = "only-at-1m", 1048576
    fig = plots.pareto(pd.concat([df, extra], ignore_index=True), hue="techniques")
    names = {t.get_text() for leg in fig.legends for t in leg.get_texts()}
    assert {"baseline", "indexpool", "only-at-1m", "Pareto front"} <= names, names
    plots.plt.close("all")


def test_technique_bars_label_the_speed_up_over_the_baseline():
    fig = plots.technique_bars(_study_like())
    labels = sorted(t.get_text() for ax in fig.axes for t in ax.texts)
    # speed-up = baseline step / technique step: 100/80 = 1.25, 400/250 = 1.60, and 1.00 twice
    assert labels == ["1.00×", "1.00×", "1.25×", "1.60×"]
    plots.plt.close("all")


def test_heatmap_names_its_aggregation():
    df = _study_like()
    fig = plots.heatmap(df, "step.context", "workload", agg="median")
    assert "median of up to 2 runs per cell" in fig.axes[0].get_title()
    fig = plots.heatmap(df, "techniques", "step.context")
    assert "one run per cell" in fig.axes[0].get_title()
    plots.plt.close("all")


def test_run_engine_systemc_gives_the_native_result_under_another_key(exe):
    # engine="systemc" passes --engine systemc: the replay under the SystemC kernel, every processor
    # reaching memory through a TLM-2.0 link; the step is the native one to the bit.
    assert run_args(hardware="h200", workload="glm-5", engine="systemc")[-2:] == ["--engine", "systemc"]
    assert "--engine" not in run_args(hardware="h200", workload="glm-5")
    sets = ["workload.model.num_layers=2",
            "workload.layers=[{first: 0, last: 1, attention: dsa, indexer: full, mlp: dense}]"]
    native = indexsim.run(hardware="h200", workload="glm-5", context=2048, fast=True, sets=sets)
    sc = indexsim.run(hardware="h200", workload="glm-5", context=2048, fast=True, sets=sets, engine="systemc")
    assert sc.step_us == native.step_us
    assert sc.config["engine"] == "systemc" and "engine" not in native.config
    assert sc.key != native.key


def test_run_l2_start_clean_replays_a_captured_trace_from_an_empty_l2(exe):
    # l2_start="clean" passes --l2-start clean: the 4 MiB copy no longer writes back the dirty lines
    # of its capture's memset flush, so it is faster, and the run's config no longer records the start.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    trace = os.path.join(root, "traces", "captured", "copy_4MiB.itr")
    assert run_args(hardware="h200", trace=trace, l2_start="clean")[-2:] == ["--l2-start", "clean"]
    assert "--l2-start" not in run_args(hardware="h200", trace=trace)
    capture = indexsim.run(hardware="h200", trace=trace)
    clean = indexsim.run(hardware="h200", trace=trace, l2_start="clean")
    assert clean.step_us < capture.step_us
    assert capture.config["l2_start"]["dirty_flush_MiB"] == 256 and "l2_start" not in clean.config

