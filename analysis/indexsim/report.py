# SPDX-License-Identifier: Apache-2.0
"""`python -m indexsim report --db FILE --out DIR`: a Markdown and an HTML report of a results
database, with its plots as PNG and SVG."""
from __future__ import annotations

import html
import os
from typing import List, Optional

import pandas as pd

from . import plots
from .results import kernels, load

_SUMMARY = ["step_us", "roofline_us", "tokens_per_second", "sm_utilisation", "l2_hit_rate"]


def _axes(df: pd.DataFrame) -> List[str]:
    """The columns that vary between runs, without those that merely follow another one (every
    hardware.* key of a preset follows `hardware`): the sweep's axes, as far as the database tells."""
    named = [c for c in ("hardware", "workload", "techniques", "mode", "seed") if c in df.columns]
    steps = [c for c in df.columns if c.startswith("step.")]
    rest = [c for c in df.columns if "." in c and c not in steps]
    kept: List[str] = []
    for c in named + steps + rest:
        col = df[c].astype(str)
        if col.nunique() <= 1:
            continue
        follows = any(df[[k, c]].astype(str).drop_duplicates().shape[0] == df[k].astype(str).nunique()
                      for k in kept)
        if not follows:
            kept.append(c)
    return kept


def _both(fig_fn, out: str, stem: str) -> List[str]:
    names = []
    for ext in ("png", "svg"):
        name = f"{stem}.{ext}"
        fig_fn(os.path.join(out, name))
        names.append(name)
    plots.plt.close("all")
    return names


def write(db: str, out: str, title: Optional[str] = None) -> str:
    """Writes report.md, report.html and the plots into `out`; returns the Markdown path."""
    os.makedirs(out, exist_ok=True)
    df = load(db)
    ok = df[df["status"] == "ok"]
    axes = _axes(df)
    title = title or f"IndexSim results: {os.path.basename(db)}"
    figures = []  # (caption, [files])

    if len(ok):
        hue = axes[0] if axes else None
        figures.append(("Footprint per GPU against step latency; the dashed line is the Pareto front.",
                        _both(lambda p: plots.pareto(ok, hue=hue, out=p), out, "pareto")))
        two = [a for a in axes if ok[a].astype(str).nunique() > 1][:2]
        if len(two) == 2:
            figures.append((f"Step latency (µs) over {two[0]} × {two[1]}, averaged over the other axes.",
                            _both(lambda p: plots.heatmap(ok, two[0], two[1], out=p), out, "heatmap")))
        # The slowest run shows the most structure; its kernels make the per-layer and timeline plots.
        slow = ok.sort_values("step_us").iloc[-1]
        ks = kernels(db, slow["key"])
        if len(ks):
            figures.append((f"Time per layer by kernel kind, run {slow['key']}.",
                            _both(lambda p: plots.layer_stack(ks, out=p), out, "layers")))
            figures.append((f"Timeline of run {slow['key']}.",
                            _both(lambda p: plots.timeline(ks, out=p), out, "timeline")))

    cols = ["key", "status"] + axes + [c for c in _SUMMARY if c in df.columns]
    table = df[cols].sort_values(axes + ["key"] if axes else ["key"])
    failed = df[df["status"] != "ok"][["key", "error"]]
    units = df.attrs.get("units", {})

    md = [f"# {title}", "",
          f"{len(df)} runs ({len(ok)} ok, {len(df) - len(ok)} failed); axes: {', '.join(axes) or 'none'}.", ""]
    md += ["## Runs", "", table.to_markdown(index=False) if _has_tabulate() else _md_table(table), ""]
    if units:
        md += ["Units: " + ", ".join(f"{k} [{v}]" for k, v in sorted(units.items()) if k in cols) + ".", ""]
    if len(failed):
        md += ["## Failed runs", ""] + [f"- `{r.key}`: {r.error}" for r in failed.itertuples()] + [""]
    md += ["## Plots", ""]
    for caption, files in figures:
        md += [f"![{caption}]({files[0]})", "", f"{caption} ([SVG]({files[1]}))", ""]
    path = os.path.join(out, "report.md")
    with open(path, "w") as f:
        f.write("\n".join(md))

    body = [f"<h1>{html.escape(title)}</h1>",
            f"<p>{len(df)} runs ({len(ok)} ok, {len(df) - len(ok)} failed); axes: "
            f"{html.escape(', '.join(axes) or 'none')}.</p>", "<h2>Runs</h2>", table.to_html(index=False)]
    if len(failed):
        body += ["<h2>Failed runs</h2>", failed.to_html(index=False)]
    body.append("<h2>Plots</h2>")
    for caption, files in figures:
        body.append(f'<figure><img src="{files[1]}" alt="{html.escape(caption)}">'
                    f"<figcaption>{html.escape(caption)}</figcaption></figure>")
    with open(os.path.join(out, "report.html"), "w") as f:
        f.write("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>" + html.escape(title) +
                "</title><style>body{font-family:sans-serif;max-width:70em;margin:auto}"
                "table{border-collapse:collapse;font-size:80%}td,th{border:1px solid #ccc;padding:2px 6px}"
                "img{max-width:100%}</style></head><body>" + "\n".join(body) + "</body></html>\n")
    return path


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401
        return True
    except ImportError:
        return False


def _md_table(df: pd.DataFrame) -> str:
    def cell(v):
        return f"{v:.6g}" if isinstance(v, float) else str(v)
    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)
