# SPDX-License-Identifier: Apache-2.0
"""MTP drafting as an option of every workload that has the module (issue 21, item 7)."""
import pytest

import indexsim

SETS = ["workload.model.num_layers=2",
        "workload.layers=[{first: 0, last: 1, attention: dsa, indexer: full, mlp: dense}]"]


def test_a_drafting_decode_step_runs_the_module_and_counts_the_accepted_tokens(exe):
    # tokens/s = batch x (1 + p) / step time with one module, p = mtp.acceptance_rate.
    plain = indexsim.run(hardware="h200", workload="glm-5", context=4096, batch=2, fast=True, sets=SETS)
    mtp = indexsim.run(hardware="h200", workload="glm-5", context=4096, batch=2, fast=True,
                       sets=SETS + ["workload.mtp.enabled=true", "workload.mtp.acceptance_rate=0.8"])
    assert "tokens_per_step" not in plain.metrics
    assert mtp.metrics["tokens_per_step"] == pytest.approx(2 * 1.8)
    assert mtp.metrics["tokens_per_second"] == pytest.approx(2 * 1.8 / (mtp.step_us * 1e-6))
    names = list(mtp.kernels["name"])
    assert names.index("lm_head") < names.index("L2.mtp_eh_proj") < names.index("L2.mtp_lm_head")
    assert mtp.step_us > plain.step_us  # two queries a sequence and one more layer


def test_drafting_on_a_model_without_the_module_is_a_config_error(exe):
    with pytest.raises(indexsim.ConfigError, match="model.mtp_layers is 0"):
        indexsim.run(hardware="h200", workload="glm-5", context=4096, fast=True,
                     sets=SETS + ["workload.mtp.enabled=true", "workload.model.mtp_layers=0"])
