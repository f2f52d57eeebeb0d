# SPDX-License-Identifier: Apache-2.0
"""Golden regression: every case of scripts/golden.py gives, less wall time and code version, exactly
the result stored in tests/golden/ (float for float). A refactor must leave these identical; a model
change regenerates them on purpose (`python3 scripts/golden.py --regen`) and says why in its commit."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
import golden  # noqa: E402


@pytest.mark.parametrize("name", golden.names())
def test_result_is_identical_to_the_stored_golden_copy(exe, name):
    stored = golden.load_golden(name)
    now = golden.run_case(name)
    differences = golden.diff(stored, now)
    assert not differences, f"{name} moved ({len(differences)} shown):\n" + "\n".join(differences)


def test_the_diff_names_a_changed_float():
    # The comparison is exact: one ulp is a difference, and it is reported with its path.
    a = {"metrics": [{"name": "step_time", "value": 1.0}]}
    b = {"metrics": [{"name": "step_time", "value": 1.0000000000000002}]}
    assert golden.diff(a, b) == [".metrics[0].value: 1.0 -> 1.0000000000000002"]
    assert golden.diff(a, a) == []


# The decode runs of the golden set: the prefill chunks take 15 s each under SystemC (checked by hand,
# identical) and would double the suite's longest tests.
SYSTEMC_CASES = [n for n, a in golden.CASES.items() if a[0] == "run" and "chunk" not in a]


@pytest.mark.parametrize("name", SYSTEMC_CASES)
def test_the_systemc_engine_gives_the_stored_golden_result(exe, name):
    # --engine systemc: every processor reaches memory through a TLM-2.0 link, and the replay runs in
    # a SystemC thread; the result is the native one bit for bit. Only the recorded engine (and so
    # the run's key, the hash of its configuration) differs.
    stored = golden.load_golden(name)
    out = subprocess.run([exe] + golden.CASES[name] + ["--json", "--engine", "systemc"], cwd=golden.ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    now = golden.scrub(json.loads(out.stdout))
    assert now["config"].pop("engine") == "systemc"
    assert now.pop("key") != stored.pop("key")
    differences = golden.diff(stored, now)
    assert not differences, f"{name} under SystemC ({len(differences)} shown):\n" + "\n".join(differences)
