# SPDX-License-Identifier: Apache-2.0
"""The example notebook (examples/analysis.ipynb) runs from start to end: its cells assert what
they show (a sweep's runs, a rerun that simulates nothing, H200 faster than H100, the export)."""
import os

import pytest

from conftest import REPO

nbformat = pytest.importorskip("nbformat", reason="pip install nbformat nbclient ipykernel (scripts/requirements.txt)")
nbclient = pytest.importorskip("nbclient", reason="pip install nbformat nbclient ipykernel (scripts/requirements.txt)")


def test_example_notebook_runs(exe, monkeypatch):
    # The kernel is a fresh Python: it finds the package and the built executable as the tests do.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO / "analysis"), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("INDEXSIM_EXE", exe)
    nb = nbformat.read(str(REPO / "examples" / "analysis.ipynb"), as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(REPO / "examples")}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any("5 runs: 5 ok" in o.get("text", "") for o in outputs)
