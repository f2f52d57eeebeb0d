# SPDX-License-Identifier: Apache-2.0
"""IndexSim from Python: run simulations, sweep design spaces, load results into pandas, plot and
report. Simulations run in the `indexsim` executable (SystemC elaborates once per process); the
optional `_core` extension serves what needs no elaboration (config resolution and hashing, shard
merges, trace summaries)."""
from __future__ import annotations

import os as _os

# In a source checkout the extension is built into BUILD/analysis/indexsim (scripts/test.sh sets
# INDEXSIM_BUILD_DIR); make it part of this package.
for _d in filter(None, [_os.environ.get("INDEXSIM_BUILD_DIR")]):
    for _p in (_os.path.join(_d, "analysis", "indexsim"),
               _os.path.join(_os.path.dirname(__file__), "..", "..", _d, "analysis", "indexsim")):
        if _os.path.isdir(_p) and _os.path.abspath(_p) not in map(_os.path.abspath, __path__):
            __path__.append(_os.path.abspath(_p))

from . import trace  # noqa: E402
from ._exe import (ConfigError, IndexSimError, PlacementError, SimulationError, TraceError,  # noqa: E402
                   UsageError, executable)
from .results import components, kernels, load, row_counts
from .run import Result, run
from .sweep import SweepSummary, merge, plan, sweep


def _load_core():
    # libsystemc.so (a dependency of _core) needs an sc_main in the global scope when it loads.
    import ctypes
    for d in __path__:
        lib = _os.path.join(d, "libindexsim_sc_main.so")
        if _os.path.isfile(lib):
            ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
            break
    import importlib
    return importlib.import_module("._core", __name__)


try:
    _core = _load_core()
except ImportError:  # a source checkout without the built extension
    _core = None

__version__ = "0.1.0"
__all__ = ["run", "Result", "sweep", "plan", "merge", "SweepSummary", "load", "kernels", "components",
           "row_counts", "trace", "executable", "plots", "report", "IndexSimError", "ConfigError", "TraceError",
           "PlacementError", "UsageError", "SimulationError"]


def __getattr__(name):
    # plots pulls in matplotlib: load it (and the report that uses it) only when asked for.
    if name in ("plots", "report"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(name)
