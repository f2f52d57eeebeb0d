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


def memory_bytes(df: pd.DataFrame, what: str = "indexer_cache") -> pd.Series:
    """Bytes one GPU holds of `what`: a footprint class (footprint_<what>: indexer_cache, kv_cache,
    weights, ...), or "total", the sum of every footprint_* metric."""
    cols = [c for c in df.columns if c.startswith(FOOTPRINT_PREFIX)]
    if not cols:
        raise ValueError("no footprint_* metric columns: load the results with indexsim.load()")
    if what == "total":
        return df[cols].fillna(0).sum(axis=1)
    col = FOOTPRINT_PREFIX + what
    if col not in df.columns:
        raise ValueError(f"no {col} metric; footprints stored: {', '.join(c[len(FOOTPRINT_PREFIX):] for c in cols)}")
    return df[col].fillna(0)


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


def _ok(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["status"] == "ok"] if "status" in df else df


def _unit_label(col: str) -> str:
    return f"{col[:-3]} (µs)" if col.endswith("_us") else col


def _facets(n: int, width: float = 4.2, height: float = 3.4):
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def _groups(ok: pd.DataFrame, facet: Sequence[str]):
    """(title, rows) per combination of the facet columns that vary; one group of all rows if none does."""
    keys = [f for f in facet if f in ok and ok[f].astype(str).nunique() > 1]
    if not keys:
        return [("all runs", ok)]
    out = []
    for value, part in ok.groupby(keys, sort=True):
        value = value if isinstance(value, tuple) else (value,)
        out.append((", ".join(f"{k}={v}" for k, v in zip(keys, value)), part))
    return out


def pareto(df: pd.DataFrame, latency: str = "step_us", hue: Optional[str] = None, memory: str = "indexer_cache",
           facet: Sequence[str] = ("workload", "step.context"), out: Optional[str] = None):
    """Footprint of `memory` (default the indexer cache, what the techniques change; "total" adds
    the weights and KV that every technique shares) against step latency, one panel per value of
    the `facet` columns that vary (default workload × context: a 1M-token step and a 128K one are
    not on one scale), with each panel's Pareto front (both lower is better)."""
    ok = _ok(df)
    mem = memory_bytes(ok, memory) / 2**20
    if isinstance(facet, str):
        facet = (facet,)
    groups = _groups(ok, facet or ())
    fig, axes = _facets(len(groups))
    hues = sorted(ok[hue].astype(str).unique()) if hue and hue in ok else []
    colours = {h: plt.cm.tab10(i % 10) for i, h in enumerate(hues)}
    for ax, (value, part) in zip(axes, groups):
        if hues:
            for h, sub in part.groupby(part[hue].astype(str), sort=True):
                ax.scatter(sub[latency], mem[sub.index], label=h, s=30, color=colours[h])
        else:
            ax.scatter(part[latency], mem[part.index], s=30)
        if len(part):
            lat, m = part[latency].to_numpy(), mem[part.index].to_numpy()
            front = pareto_front(lat, m)
            ax.plot(lat[front], m[front], "k--", lw=1, marker="o", mfc="none", ms=10, label="Pareto front")
        ax.set_title(value, fontsize=9)
        ax.set_xlabel(_unit_label(latency))
        ax.set_ylabel(f"{memory.replace('_', ' ')} per GPU (MiB)")
        ax.grid(alpha=0.3)
    # One legend for every panel's colours: a technique that only some panels hold (an extra row's
    # workload) was missing from a legend drawn from the first panel.
    from matplotlib.lines import Line2D
    handles = [Line2D([], [], ls="", marker="o", color=colours[h], label=h) for h in hues]
    handles.append(Line2D([], [], color="k", ls="--", lw=1, marker="o", mfc="none", ms=10, label="Pareto front"))
    fig.suptitle(f"{memory.replace('_', ' ')} footprint against {_unit_label(latency)}", fontsize=10)
    fig.tight_layout()
    fig.legend(handles=handles, fontsize=7, title=hue, title_fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 0.95))
    return _save(fig, out)


def technique_bars(df: pd.DataFrame, latency: str = "step_us", by: str = "techniques",
                   facet: Sequence[str] = ("workload", "step.context"), out: Optional[str] = None):
    """Step time per technique (bars) beside its roofline (hatched: the critical path's lower
    bound, no kernel faster than its bytes or FLOPs allow), one panel per workload × context;
    each bar is labelled with its speed-up over the panel's baseline where there is one."""
    ok = _ok(df)
    groups = _groups(ok, facet)
    fig, axes = _facets(len(groups), width=4.8)
    for ax, (value, part) in zip(axes, groups):
        part = part.sort_values(by)
        x = np.arange(len(part))
        ax.bar(x - 0.2, part[latency], width=0.4, label=_unit_label(latency))
        if "roofline_us" in part:
            ax.bar(x + 0.2, part["roofline_us"], width=0.4, hatch="//", fill=False, label="roofline (µs)")
        base = part[part[by] == "baseline"][latency]
        if len(base):
            for xi, v in zip(x, part[latency]):
                ax.text(xi - 0.2, v, f"{base.iloc[0] / v:.2f}×", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(x, part[by].astype(str), rotation=30, ha="right", fontsize=8)
        ax.set_title(value, fontsize=9)
        ax.set_ylabel("µs")
        ax.set_ylim(0, 1.12 * max(part[latency].max(), part.get("roofline_us", part[latency]).max()))
        ax.grid(axis="y", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.suptitle(f"{_unit_label(latency)} per {by} (label: speed-up over baseline)", fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8)
    return _save(fig, out)


def heatmap(df: pd.DataFrame, x: str, y: str, value: str = "step_us", agg: str = "mean", out: Optional[str] = None):
    """`value` over two axes; where several runs share a cell (axes not shown), `agg` of them
    (mean, median, min, max), and the title says so and how many."""
    ok = _ok(df)
    table = ok.pivot_table(index=y, columns=x, values=value, aggfunc=agg)
    counts = ok.pivot_table(index=y, columns=x, values=value, aggfunc="count")
    per_cell = int(counts.max().max()) if counts.size else 0
    data = table.to_numpy(float)
    fig, ax = plt.subplots(figsize=(2.0 + 1.1 * max(len(table.columns), 2), 1.6 + 0.55 * max(len(table.index), 2)))
    im = ax.imshow(data, aspect="auto", cmap="viridis", origin="lower")
    ax.set_xticks(range(len(table.columns)), [str(c) for c in table.columns], rotation=30, ha="right", fontsize=9)
    ax.set_yticks(range(len(table.index)), [str(i) for i in table.index], fontsize=9)
    finite = data[np.isfinite(data)]
    middle = (finite.min() + finite.max()) / 2 if finite.size else 0
    for (i, j), v in np.ndenumerate(data):
        if np.isfinite(v):
            # dark text on the light end of viridis, light on the dark end
            ax.text(j, i, f"{v:,.4g}", ha="center", va="center", fontsize=8, color="k" if v > middle else "w")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    fig.colorbar(im, ax=ax, label=_unit_label(value))
    how = f"{agg} of up to {per_cell} runs per cell" if per_cell > 1 else "one run per cell"
    ax.set_title(f"{_unit_label(value)} over {x} × {y} ({how})", fontsize=9)
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
    # Beside the bars, not over them: the layers are all the same height.
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
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
