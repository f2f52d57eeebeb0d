# SPDX-License-Identifier: Apache-2.0
"""Finding the `indexsim` executable and running it: the simulator elaborates SystemC once per
process, so every simulation runs in its own process."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import List, Optional, Sequence

_PKG = Path(__file__).resolve().parent
_REPO = _PKG.parent.parent  # analysis/indexsim -> repository root, in a source checkout


def executable() -> str:
    """The indexsim binary: $INDEXSIM_EXE, the one installed with the package, the build tree
    ($INDEXSIM_BUILD_DIR, default build/), then PATH."""
    env = os.environ.get("INDEXSIM_EXE")
    if env:
        return env
    candidates = [_PKG / "bin" / "indexsim"]
    build = os.environ.get("INDEXSIM_BUILD_DIR")
    if build:
        b = Path(build)
        candidates += [b / "sim" / "indexsim", _REPO / b / "sim" / "indexsim"]
    candidates.append(_REPO / "build" / "sim" / "indexsim")
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    found = shutil.which("indexsim")
    if found:
        return found
    raise FileNotFoundError(
        "indexsim executable not found: set INDEXSIM_EXE or INDEXSIM_BUILD_DIR, or `pip install .`; tried "
        + ", ".join(str(c) for c in candidates))


def config_dir() -> Optional[Path]:
    """The configs/ installed with the package (None in a source checkout, where the binary finds
    the source tree's configs/ itself)."""
    d = _PKG / "configs"
    return d if d.is_dir() else None


def _absolute(args: Sequence[str]) -> List[str]:
    # The binary looks up names under ./configs; in an installed package it runs in the package
    # directory, so paths the caller gave relative to their own directory are made absolute.
    out = []
    for a in args:
        if a and not a.startswith("-") and os.path.exists(a):
            out.append(os.path.abspath(a))
        else:
            out.append(a)
    return out


def call(args: Sequence[str], *, capture: bool = True, check: bool = True,
         stderr=None, timeout: Optional[float] = None) -> subprocess.CompletedProcess:
    """Runs `indexsim ARGS`; raises RuntimeError with the tool's own message on failure."""
    cwd = config_dir()
    argv = [executable()] + (_absolute(args) if cwd else list(args))
    proc = subprocess.run(argv, cwd=str(cwd.parent) if cwd else None, text=True,
                          stdout=subprocess.PIPE if capture else None,
                          stderr=subprocess.PIPE if stderr is None and capture else stderr, timeout=timeout)
    if check and proc.returncode != 0:
        msg = (proc.stderr or "").strip() if isinstance(proc.stderr, str) else ""
        raise RuntimeError(f"indexsim {' '.join(args[:1])} failed ({proc.returncode}): {msg}")
    return proc
