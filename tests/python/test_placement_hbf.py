# SPDX-License-Identifier: Apache-2.0
"""Placement uses the flash tier when a policy asks for it (issue 21, item 6): with
placement.class_regions {weights: hbf} the weights land in the HBF region and their reads are served,
and timed, by the HBF model instead of the HBM."""
import pytest

import indexsim

# Two dense DSA layers keep the runs short.
SETS = ["workload.model.num_layers=2",
        "workload.layers=[{first: 0, last: 1, attention: dsa, indexer: full, mlp: dense}]"]


def _reads(r, unit):
    c = r.components
    return float(c[(c["unit"] == unit) & (c["statistic"] == "bytes_read")]["value"].sum())


def test_weights_sent_to_hbf_are_placed_and_read_there(exe):
    hbm = indexsim.run(hardware="h200", workload="glm-5", context=1024, fast=True, sets=SETS)
    hbf = indexsim.run(hardware="h200", workload="glm-5", context=1024, fast=True,
                       sets=SETS + ["techniques.placement.class_regions.weights=hbf"])
    assert hbm.metrics["placed_hbf"] == 0
    assert hbf.metrics["placed_hbf"] == hbf.metrics["footprint_weights"] > 0
    # The weights' reads moved from the HBM to the HBF: the HBF read what the HBM no longer did.
    moved = _reads(hbm, "hbm") - _reads(hbf, "hbm")
    assert _reads(hbm, "hbf") == 0 and moved > 0
    assert _reads(hbf, "hbf") == pytest.approx(moved, rel=0.05)
    # Flash reads cost flash time: 1.6 TB/s at microseconds of latency against 4.8 TB/s of HBM.
    assert hbf.step_us > 2 * hbm.step_us


def test_a_class_sent_to_a_region_the_hardware_lacks_is_a_placement_error(exe):
    with pytest.raises(indexsim.PlacementError, match="its regions: hbm, cxl, sram, hbf, peers"):
        indexsim.run(hardware="h200", workload="glm-5", context=1024, fast=True,
                     sets=SETS + ["techniques.placement.class_regions.weights=flash"])


# The smoke sweep's cut-down model: tensors of a few hundred KiB each, so 2 MiB pages waste most of
# what they allocate.
TINY = SETS + ["workload.model.vocab_size=2048", "workload.model.hidden_size=1024",
               "workload.mlp.dense_intermediate_size=1024", "workload.attention.num_heads=8",
               "workload.attention.q_lora_rank=512"]


def test_fragmentation_over_its_threshold_re_places_with_the_fallback_granule(exe):
    # The seeds' "automatic fallback triggers when memory fragmentation exceeds 40 %": the run
    # re-places with placement.fallback_page_bytes, reports both placements and what it did.
    r = indexsim.run(hardware="h200", workload="glm-5", context=1024, fast=True, sets=TINY)
    fb = r.techniques["fragmentation_fallback"]
    assert fb["fragmentation"] > fb["threshold"] == 0.4
    assert fb["page_bytes"] == 2 * 1024 * 1024 and fb["fallback_page_bytes"] == 512
    assert r.metrics["fragmentation_before_fallback"] == fb["fragmentation"]
    assert r.metrics["fragmentation"] == fb["fragmentation_after"] < 0.01
    assert "fragmentation_fallback" in r.techniques["thresholds_tripped"]
    # With the threshold above it, the first placement stands and nothing is re-placed.
    kept = indexsim.run(hardware="h200", workload="glm-5", context=1024, fast=True,
                        sets=TINY + ["techniques.monitoring.fragmentation_max=0.9"])
    assert "fragmentation_fallback" not in kept.techniques
    assert "fragmentation_before_fallback" not in kept.metrics
    assert kept.metrics["fragmentation"] == fb["fragmentation"]
