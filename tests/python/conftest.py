# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures: the built executable (INDEXSIM_BUILD_DIR, as scripts/test.sh sets it) and one smoke
sweep database that the load/plot/report tests share, so the sweep runs once per session."""
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "configs" / "sweeps" / "smoke.yaml"
# The source tree's package, unless the installed one is under test (INDEXSIM_TEST_INSTALLED=1).
if os.environ.get("INDEXSIM_TEST_INSTALLED") != "1":
    sys.path.insert(0, str(REPO / "analysis"))

import indexsim  # noqa: E402


@pytest.fixture(scope="session")
def exe():
    try:
        return indexsim.executable()
    except FileNotFoundError as e:
        pytest.skip(f"indexsim executable not built: {e}")


@pytest.fixture(scope="session")
def smoke_db(exe, tmp_path_factory):
    db = str(tmp_path_factory.mktemp("smoke") / "smoke.sqlite")
    res = indexsim.sweep(str(SMOKE), db, workers=2, quiet=True)
    assert res.ok == res.total, res
    return db
