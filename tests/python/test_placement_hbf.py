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
