# SPDX-License-Identifier: Apache-2.0
"""Plots of sweep results and of single runs (matplotlib, Agg backend: no display needed).
Each function returns the Figure and, given `out`, saves it (the format follows the extension)."""
from __future__ import annotations

from typing import Optional, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

FOOTPRINT_PREFIX = "footprint_"


def memory_bytes(df: pd.DataFrame) -> pd.Series:
    """Bytes one GPU holds: the sum of the run's footprint_* metrics (weights, KV, indexer cache, ...)."""
    cols = [c for c in df.columns if c.startswith(FOOTPRINT_PREFIX)]
    if not cols:
        raise ValueError("no footprint_* metric columns: load the results with indexsim.load()")
    return df[cols].fillna(0).sum(axis=1)


def pareto_front(x: Sequence[float], y: Sequence[float]) -> np.ndarray:
    """Indices of the points that no other point beats in both x and y (both minimised), by x."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    order = np.lexsort((y, x))
    front, best = [], np.inf
    for i in order:
        if y[i] < best:
            front.append(i)
            best = y[i]
    return np.array(front, dtype=int)


def _save(fig, out: Optional[str]):
    if out:
        fig.savefig(out, bbox_inches="tight", dpi=120)
    return fig


def pareto(df: pd.DataFrame, latency: str = "step_us", hue: Optional[str] = None, out: Optional[str] = None):
    """Memory footprint against step latency, with the Pareto front (both lower is better)."""
    ok = df[df["status"] == "ok"] if "status" in df else df
    mem = memory_bytes(ok) / 2**30
    lat = ok[latency]
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    if hue and hue in ok:
        for value, part in ok.groupby(hue, sort=True):
            ax.scatter(part[latency], mem[part.index], label=f"{hue}={value}", s=28)
    else:
        ax.scatter(lat, mem, s=28)
    if len(ok):
        front = pareto_front(lat.to_numpy(), mem.to_numpy())
        ax.plot(lat.to_numpy()[front], mem.to_numpy()[front], "k--", lw=1, marker="o", mfc="none", ms=10,
                label="Pareto front")
    ax.legend(fontsize=7)
    ax.set_xlabel(f"{latency} (µs)" if latency.endswith("_us") else latency)
    ax.set_ylabel("footprint per GPU (GiB)")
    ax.set_title("memory against latency")
    ax.grid(alpha=0.3)
    return _save(fig, out)


def heatmap(df: pd.DataFrame, x: str, y: str, value: str = "step_us", out: Optional[str] = None):
    """`value` (mean over the other axes) over two axes."""
    ok = df[df["status"] == "ok"] if "status" in df else df
    table = ok.pivot_table(index=y, columns=x, values=value, aggfunc="mean")
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * max(len(table.columns), 2), 1.2 + 0.6 * max(len(table.index), 2)))
    im = ax.imshow(table.to_numpy(float), aspect="auto", cmap="viridis", origin="lower")
    ax.set_xticks(range(len(table.columns)), [str(c) for c in table.columns], rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(table.index)), [str(i) for i in table.index], fontsize=8)
    for (i, j), v in np.ndenumerate(table.to_numpy(float)):
        if np.isfinite(v):
            ax.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize=7, color="w")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    fig.colorbar(im, ax=ax, label=value)
    ax.set_title(f"{value} over {x} × {y}")
    return _save(fig, out)


def layer_stack(kernels: pd.DataFrame, out: Optional[str] = None):
    """Time per layer, stacked by kernel kind (kernel durations summed, so overlapped kernels add)."""
    k = kernels.assign(time_us=(kernels["end_ns"] - kernels["start_ns"]) / 1e3)
    table = k.pivot_table(index="layer", columns="kind", values="time_us", aggfunc="sum").fillna(0)
    fig, ax = plt.subplots(figsize=(max(6.4, 0.12 * len(table)), 4.4))
    bottom = np.zeros(len(table))
    for kind in table.columns:
        ax.bar([str(i) for i in table.index], table[kind], bottom=bottom, label=kind, width=0.85)
        bottom += table[kind].to_numpy()
    ax.set_xlabel("layer (-1: outside the layers)")
    ax.set_ylabel("kernel time (µs)")
    ax.set_title("time per layer by kernel kind")
    if len(table) > 30:
        ax.set_xticks(range(0, len(table), max(1, len(table) // 20)))
    ax.legend(fontsize=7, ncol=2)
    return _save(fig, out)


def timeline(kernels: pd.DataFrame, out: Optional[str] = None):
    """Kernels of one run on their streams over time."""
    fig, ax = plt.subplots(figsize=(9, 1.5 + 0.5 * kernels["stream"].nunique()))
    kinds = sorted(kernels["kind"].unique())
    colours = {k: plt.cm.tab20(i % 20) for i, k in enumerate(kinds)}
    for kind, part in kernels.groupby("kind"):
        for _, r in part.iterrows():
            ax.broken_barh([(r["start_ns"] / 1e3, (r["end_ns"] - r["start_ns"]) / 1e3)], (r["stream"] - 0.4, 0.8),
                           facecolors=colours[kind])
    handles = [Patch(color=colours[k], label=k) for k in kinds]
    ax.legend(handles=handles, fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    ax.set_yticks(sorted(kernels["stream"].unique()))
    ax.set_ylabel("stream")
    ax.set_xlabel("time (µs)")
    ax.set_title("timeline")
    return _save(fig, out)
