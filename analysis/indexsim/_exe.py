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
        return os.path.abspath(env) if os.sep in env else env
    candidates = [_PKG / "bin" / "indexsim"]
    build = os.environ.get("INDEXSIM_BUILD_DIR")
    if build:
        b = Path(build)
        candidates += [b / "sim" / "indexsim", _REPO / b / "sim" / "indexsim"]
    candidates.append(_REPO / "build" / "sim" / "indexsim")
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c.resolve())  # absolute: the caller may change directory afterwards
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


class IndexSimError(RuntimeError):
    """A failed `indexsim` command: the tool's one-line message, its exit status and command."""

    def __init__(self, message: str, returncode: int = 1, command: str = ""):
        super().__init__(message)
        self.returncode = returncode
        self.command = command


class UsageError(IndexSimError, ValueError):
    """A bad option or argument (exit status 2)."""


class ConfigError(UsageError):
    """A config file, key or value is refused: the message names the file, the key and the value."""


class TraceError(UsageError):
    """A trace file is missing, corrupt or inconsistent: the message names the file and the offset."""


class PlacementError(UsageError):
    """The step's tensors do not fit the hardware's memories; the message says by how much, in GiB,
    and which setting would make them fit."""


class SimulationError(IndexSimError):
    """The simulation or a file operation failed (exit status 1)."""


def _error(command: str, returncode: int, stderr: str) -> IndexSimError:
    # The executable's last line is its message (earlier lines are warnings and progress); its
    # wording says which kind (sim/cli/main.cpp).
    lines = [l for l in (stderr or "").strip().splitlines() if l.strip()]
    msg = lines[-1].strip() if lines else f"indexsim {command} failed with status {returncode}"
    kind = (ConfigError if ": config error: " in msg else TraceError if ": trace error: " in msg
            else PlacementError if ": placement: " in msg else UsageError if returncode == 2 else SimulationError)
    return kind(msg, returncode, command)


def _environment() -> dict:
    env = dict(os.environ)
    env.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")
    d = config_dir()
    if d is not None:  # an installed package: its configs/ is searched first (sim/core/paths.cpp)
        env.setdefault("INDEXSIM_CONFIG_DIR", str(d))
    return env


def call(args: Sequence[str], *, capture: bool = True, check: bool = True,
         stderr=None, timeout: Optional[float] = None) -> subprocess.CompletedProcess:
    """Runs `indexsim ARGS` in the caller's working directory, so relative paths (a --db, a
    --timeline, a trace) mean what they mean to the caller; raises an IndexSimError subclass
    (ConfigError, TraceError, PlacementError, UsageError, SimulationError) with the tool's own
    one-line message on failure."""
    proc = subprocess.run([executable()] + [str(a) for a in args], text=True, env=_environment(),
                          stdout=subprocess.PIPE if capture else None,
                          stderr=subprocess.PIPE if stderr is None and capture else stderr, timeout=timeout)
    if check and proc.returncode != 0:
        raise _error(str(args[0]) if args else "", proc.returncode,
                     proc.stderr if isinstance(proc.stderr, str) else "")
    return proc
