# SPDX-License-Identifier: Apache-2.0
"""`python -m indexsim report --db FILE --out DIR`: a Markdown and an HTML report of a results
database, with its plots as PNG and SVG."""
from __future__ import annotations

import os
from typing import List, Optional

import numpy as np
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


_HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{{ title }}</title>
<style>body{font-family:sans-serif;max-width:72em;margin:auto;padding:0 1em}
table{border-collapse:collapse;font-size:85%}td,th{border:1px solid #ccc;padding:2px 6px}
td.num{text-align:right;font-variant-numeric:tabular-nums}img{max-width:100%}
figcaption{font-size:90%;color:#333}</style></head>
<body>
<h1>{{ title }}</h1>
<p>{{ n_runs }} runs ({{ n_ok }} ok, {{ n_failed }} failed); axes: {{ axes or "none" }}.</p>
<h2>Runs</h2>
<table><thead><tr>{% for c in header %}<th>{{ c }}</th>{% endfor %}</tr></thead><tbody>
{% for row in rows %}<tr>{% for v, numeric in row %}<td{% if numeric %} class="num"{% endif %}>{{ v }}</td>{% endfor %}</tr>
{% endfor %}</tbody></table>
{% if units %}<p>Units: {{ units }}.</p>{% endif %}
{% if failed %}<h2>Failed runs</h2><ul>{% for key, error in failed %}<li><code>{{ key }}</code>: {{ error }}</li>{% endfor %}</ul>{% endif %}
<h2>Plots</h2>
{% for caption, files in figures %}<figure><img src="{{ files[1] }}" alt="{{ caption }}"><figcaption>{{ caption }}</figcaption></figure>
{% endfor %}</body></html>
"""


def _cell(v) -> str:
    """A number as people read it: four significant digits with thousands separators."""
    if isinstance(v, (float, np.floating)):
        return "n/a" if np.isnan(v) else f"{v:,.4g}"
    return str(v)


def _header(col: str, units: dict) -> str:
    return f"{col} [{units[col]}]" if col in units and not col.endswith("_us") else col



def heatmap_grid(ok, axes):
    """The heatmap's runs, axes and caption. A study (techniques, workloads, contexts): technique
    against workload @ context, one run a cell (an extra row's hardware is in its technique's name),
    not a mean over techniques that differ column to column. Otherwise the first two axes that vary,
    averaged over the rest. None when fewer than two axes vary."""
    if "techniques" in axes and "workload" in ok and "step.context" in ok:
        cells = ok.assign(**{"workload @ context": ok["workload"].astype(str) + " @ " + ok["step.context"].astype(str)})
        return (cells, "techniques", "workload @ context",
                "Step latency (µs) of each technique on each workload and context (one run per cell unless the "
                "title says otherwise).")
    two = [a for a in axes if ok[a].astype(str).nunique() > 1][:2]
    if len(two) < 2:
        return None
    rest = [a for a in axes if a not in two]
    how = f"the mean over {', '.join(rest)}" if rest else "one run per cell"
    return ok, two[0], two[1], f"Step latency (µs) over {two[0]} × {two[1]}: {how}."


def write(db: str, out: str, title: Optional[str] = None) -> str:
    """Writes report.md, report.html and the plots into `out`; returns the Markdown path."""
    df = load(db)   # first: a bad database leaves no output folder behind
    os.makedirs(out, exist_ok=True)
    ok = df[df["status"] == "ok"]
    axes = _axes(df)
    title = title or f"IndexSim results: {os.path.basename(db)}"
    figures = []  # (caption, [files])

    if len(ok):
        hue = "techniques" if "techniques" in axes else (axes[0] if axes else None)
        if any(c.startswith("footprint_indexer_cache") for c in ok.columns):
            figures.append(("Indexer-cache footprint per GPU against step latency, one panel per workload and context; the dashed "
                            "line is each panel's Pareto front (weights and KV, the same for every technique, left out).",
                            _both(lambda p: plots.pareto(ok, hue=hue, out=p), out, "pareto")))
        if "techniques" in axes:
            figures.append(("Step time per technique beside its roofline (hatched), one panel per workload and "
                            "context; labels: speed-up over the baseline.",
                            _both(lambda p: plots.technique_bars(ok, out=p), out, "techniques")))
        grid = heatmap_grid(ok, axes)
        if grid:
            cells, x, y, caption = grid
            figures.append((caption, _both(lambda p: plots.heatmap(cells, x, y, out=p), out, "heatmap")))
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
    units_line = ", ".join(f"{k} [{v}]" for k, v in sorted(units.items()) if k in cols)
    shown = table.copy()
    shown.columns = [_header(c, units) for c in cols]
    for c in shown.columns:
        shown[c] = shown[c].map(_cell)

    md = [f"# {title}", "",
          f"{len(df)} runs ({len(ok)} ok, {len(df) - len(ok)} failed); axes: {', '.join(axes) or 'none'}.", ""]
    md += ["## Runs", "", _md_table(shown), ""]
    if units_line:
        md += [f"Units: {units_line}; columns ending in _us are in microseconds.", ""]
    if len(failed):
        md += ["## Failed runs", ""] + [f"- `{r.key}`: {r.error}" for r in failed.itertuples()] + [""]
    md += ["## Plots", ""]
    for caption, files in figures:
        md += [f"![{caption}]({files[0]})", "", f"{caption} ([SVG]({files[1]}))", ""]
    path = os.path.join(out, "report.md")
    with open(path, "w") as f:
        f.write("\n".join(md))

    import jinja2
    template = jinja2.Environment(autoescape=True).from_string(_HTML)
    rows = [[(_cell(v), isinstance(v, (int, float, np.number)) and not isinstance(v, bool)) for v in row]
            for row in table.itertuples(index=False)]
    with open(os.path.join(out, "report.html"), "w") as f:
        f.write(template.render(title=title, n_runs=len(df), n_ok=len(ok), n_failed=len(df) - len(ok),
                                axes=", ".join(axes), header=list(shown.columns), rows=rows,
                                units=(units_line + "; columns ending in _us are in microseconds") if units_line else "",
                                failed=[(r.key, r.error) for r in failed.itertuples()], figures=figures))
    return path


def _md_table(df: pd.DataFrame) -> str:
    def cell(v):
        return _cell(v)
    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)
