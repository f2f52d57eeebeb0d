# SPDX-License-Identifier: Apache-2.0
"""The pybind11 core agrees with the executable: the same key for the same run, the same plan, and a
merge that never duplicates a run. Skipped where `_core` is not built (a source checkout without
INDEXSIM_BUILD_PYTHON=ON)."""
import sqlite3

import pytest

import indexsim
from conftest import SMOKE

core = indexsim._core
pytestmark = pytest.mark.skipif(core is None, reason="indexsim._core not built (INDEXSIM_BUILD_PYTHON=OFF)")


def test_resolve_gives_the_key_the_sweep_stores(exe):
    plan = indexsim.plan(str(SMOKE))
    first = plan[0]
    args = first["args"]
    sets = [args[i + 1] for i, a in enumerate(args) if a == "--set"]
    key, config = core.resolve(first["point"]["hardware"], "glm-5", context=int(first["point"]["step.context"]),
                               sets=sets, fast=True)
    assert key == first["key"]
    import json
    assert core.stable_hash(json.dumps(config)) == key


def test_core_plan_matches_the_executable_plan(exe):
    assert [r["key"] for r in core.sweep_plan(str(SMOKE))] == [r["key"] for r in indexsim.plan(str(SMOKE))]


def test_core_merge_adds_each_run_once(smoke_db, tmp_path):
    into = str(tmp_path / "into.sqlite")
    assert core.merge(into, [smoke_db]) == 5
    assert core.merge(into, [smoke_db]) == 0
    n = sqlite3.connect(into).execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    assert n == 5
