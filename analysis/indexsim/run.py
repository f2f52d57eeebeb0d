# SPDX-License-Identifier: Apache-2.0
"""`indexsim.run`: one simulation in its own process (`indexsim run --json --kernels`)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Union

import pandas as pd

from . import _exe

_STEP_KEYS = ("phase", "context", "batch", "queries", "chunk", "seed")


@dataclass
class Result:
    """What one run produced, decoded from the executable's JSON."""
    key: str
    status: str
    hardware: str
    workload: str
    step_us: float
    roofline_us: float
    metrics: Dict[str, float]
    units: Dict[str, str]
    kernels: pd.DataFrame
    components: pd.DataFrame
    config: Dict[str, Any]
    techniques: Dict[str, Any] = field(default_factory=dict)
    wall_s: float = 0.0
    code_version: str = ""
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, j: Mapping[str, Any]) -> "Result":
        metrics = {k: v["value"] for k, v in j.get("metrics", {}).items()}
        units = {k: v["unit"] for k, v in j.get("metrics", {}).items()}
        return cls(key=j["key"], status=j.get("status", "ok"), hardware=j.get("hardware", ""),
                   workload=j.get("workload", ""), step_us=j["step_ns"] / 1e3,
                   roofline_us=j.get("roofline_ns", 0.0) / 1e3, metrics=metrics, units=units,
                   kernels=pd.DataFrame(j.get("kernels", [])), components=pd.DataFrame(j.get("components", [])),
                   config=j.get("config", {}), techniques=j.get("techniques", {}), wall_s=j.get("wall_s", 0.0),
                   code_version=j.get("code_version", ""), raw=dict(j))


def run_args(config: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> List[str]:
    """`indexsim run` arguments of a RunSpec-like mapping: hardware, workload | trace, techniques,
    step (a mapping of phase/context/batch/queries/chunk/seed, or those keys at the top level; phase
    decode, chunk (one prefill chunk) or prefill (the whole prefill: time to first token)),
    fast, reuse (False: simulate repeated kernels too), steps (N consecutive decode steps on one
    hardware state; the result is the last's), sets (a list of "hardware.a.b=v" or a mapping path → value), timeline,
    engine ("native", the default, or "systemc": the same results, through TLM-2.0 sockets), l2_start
    ("capture", the default: a captured trace starts from the L2 its capture's flush left; "clean")."""
    c: Dict[str, Any] = dict(config or {})
    c.update(kwargs)
    step = dict(c.pop("step", {}) or {})
    for k in _STEP_KEYS:
        if k in c:
            step[k] = c.pop(k)
    args = ["--hardware", str(c.pop("hardware"))]
    if "trace" in c:
        args += ["--trace", str(c.pop("trace"))]
    else:
        args += ["--workload", str(c.pop("workload"))]
    args += ["--techniques", str(c.pop("techniques", "baseline"))]
    for k in _STEP_KEYS:
        if k in step:
            args += [f"--{k}", str(step.pop(k))]
    if step:
        raise ValueError(f"unknown step keys {sorted(step)}; expected {list(_STEP_KEYS)}")
    sets = c.pop("sets", []) or []
    if isinstance(sets, Mapping):
        sets = [f"{k}={_yaml_text(v)}" for k, v in sets.items()]
    for s in sets:
        args += ["--set", s]
    if c.pop("fast", False):
        args.append("--fast")
    if not c.pop("reuse", True):
        args.append("--no-reuse")
    steps = int(c.pop("steps", 1))
    if steps != 1:
        args += ["--steps", str(steps)]
    engine = str(c.pop("engine", "native"))
    if engine != "native":
        args += ["--engine", engine]
    l2_start = str(c.pop("l2_start", "capture"))
    if l2_start != "capture":
        args += ["--l2-start", l2_start]
    if c.get("timeline"):
        args += ["--timeline", str(c.pop("timeline"))]
    c.pop("timeline", None)
    if c:
        raise ValueError(f"unknown run keys {sorted(c)}")
    return args


def _yaml_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def run(config: Optional[Mapping[str, Any]] = None, *, db: Optional[str] = None, timeout: Optional[float] = None,
        **kwargs: Any) -> Result:
    """Simulates one step: `indexsim.run(hardware="h200", workload="glm-5", context=4096, fast=True)`."""
    args = ["run"] + run_args(config, **kwargs) + ["--json", "--kernels"]
    if db:
        args += ["--db", str(db)]
    proc = _exe.call(args, timeout=timeout)
    return Result.from_json(json.loads(proc.stdout))
