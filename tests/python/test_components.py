# SPDX-License-Identifier: Apache-2.0
"""The components table describes the whole step: a run that reuses segments and samples waves
reports the memory's counters of the work it did not simulate (docs/metrics.md, "Component
statistics"), so they agree with the same step simulated kernel by kernel."""
import json
import subprocess


# A GLM-5-shaped model cut to 8 identical layers and small widths, so that layers 1..7 reuse layer 0's
# segments and a run takes seconds.
SMALL = ["workload.model.num_layers=8",
         "workload.layers=[{first: 0, last: 7, attention: dsa, indexer: full, mlp: dense}]",
         "workload.model.vocab_size=2048", "workload.model.hidden_size=1024",
         "workload.mlp.dense_intermediate_size=4096", "workload.attention.num_heads=8",
         "workload.attention.q_lora_rank=512"]


def _components(exe, *extra):
    sets = [a for s in SMALL for a in ("--set", s)]
    out = subprocess.run([exe, "run", "--hardware", "h200", "--workload", "glm-5", "--context", "16384",
                          "--fast", "--json", *sets, *extra], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return {(r["unit"], r["statistic"]): r for r in json.loads(out.stdout)["components"]}


# Every line of every kernel through the memory: no reuse (and no steady projection: off by default).
EVERY = ["--no-reuse"]
# Steady projection on (a one-wave kernel's lines left once its rate is steady, README "Fast mode").
PROJECT = ["--set", "hardware.gpu.fast_mode_steady_line_marks=32"]


def test_reused_and_sampled_work_counts_in_the_memory_statistics(exe):
    # Reused segments, sampled waves and projected lines all count, each scaled by what it stands for.
    whole, every = _components(exe, *PROJECT), _components(exe, *EVERY)
    # Bytes the HBM served and the L2's misses: within 1 % (a reused layer repeats its first
    # occurrence's traffic). Before, a reuse run's components held only its simulated kernels'
    # (DeepSeek-V3.2 at 4K: 0.27 of 6.45 GB read from the HBM).
    for key in [("hbm", "bytes_read"), ("hbm", "reads"), ("l2", "read_misses"), ("l2", "read_bytes.weights")]:
        a, b = whole[key]["value"], every[key]["value"]
        assert abs(a - b) <= 0.01 * b, (key, a, b)
    # The hit rate is (read + write hits) / accesses of the whole step's counters. It stays below the
    # kernel-by-kernel one (0.107 against 0.138 here): a memo holds its segment's first occurrence,
    # which ran on a colder L2 than the layers that reuse it.
    c = {k: whole[("l2", k)]["value"] for k in ("read_hits", "write_hits", "read_misses", "merged_misses", "write_misses")}
    rate = (c["read_hits"] + c["write_hits"]) / sum(c.values())
    assert abs(whole[("l2", "hit_rate")]["value"] - rate) < 1e-12
    a, b = whole[("l2", "hit_rate")]["value"], every[("l2", "hit_rate")]["value"]
    assert 0.7 * b <= a <= 1.01 * b, (a, b)
    # A figure over the unit's own window covers the simulated kernels, and says so.
    assert "simulated kernels only" in whole[("hbm", "bandwidth_GBps")]["description"]
    assert "simulated kernels only" not in every[("hbm", "bandwidth_GBps")]["description"]


def test_warm_reuse_matches_every_kernel_simulated_within_3_percent(exe):
    # --warm-reuse takes each memo from its segment's second occurrence: the L2 hit rate and the
    # HBM and L2 read counters come within 3 % of simulating every kernel.
    warm, every = _components(exe, "--warm-reuse"), _components(exe, *EVERY)
    for key in [("hbm", "bytes_read"), ("hbm", "reads"), ("l2", "read_hits"), ("l2", "read_misses"),
                ("l2", "hit_rate"), ("l2", "read_hit_rate"), ("hbm", "row_hit_rate")]:
        a, b = warm[key]["value"], every[key]["value"]
        assert abs(a - b) <= 0.03 * b, (key, a, b)
    # Writes count when they are made (docs/metrics.md, "Writes"): a region's bytes_written is what
    # reached it plus the growth of what the L2 holds dirty for it, so it equals the L2's
    # bytes_dirtied, and the L2's writebacks count the dirty runs it made. Both agree with every kernel
    # simulated, where the HBM's own count would not: a segment simulated after reused ones finds none
    # of their dirty lines to evict (DeepSeek-V3.2 4K, fast: 52 of 130 MB before this accounting).
    for key in [("hbm", "bytes_written"), ("l2", "writebacks"), ("l2", "bytes_dirtied")]:
        a, b = warm[key]["value"], every[key]["value"]
        assert b > 0 and abs(a - b) <= 0.03 * b, (key, a, b)
    for run in (warm, every):
        assert run[("hbm", "bytes_written")]["value"] == run[("l2", "bytes_dirtied")]["value"]
        assert "counted when written" in run[("hbm", "bytes_written")]["description"]
    # Kernel by kernel, most of it is still dirty in the L2 at the end (this small model's step fits).
    assert 0 < every[("l2", "dirty_bytes.hbm")]["value"] <= every[("hbm", "bytes_written")]["value"]
    out = subprocess.run([exe, "run", "--hardware", "h200", "--workload", "glm-5", "--no-reuse", "--warm-reuse"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "exclude each other" in out.stderr, out.stderr
