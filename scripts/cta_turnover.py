#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The block scheduler's turnover, measured from captured CTA stamps: on each SM, a CTA that starts
after another CTA of its kernel ended there took that CTA's slot; the gap between them. Prints the
gaps' median and deciles per kernel name over the given traces (default: every trace of
traces/captured/); `gpu.cta_launch_ns` in the presets cites this output.

  python3 scripts/cta_turnover.py [--min-gaps N] [TRACE.itr ...]
"""
import argparse
import glob
import os
import statistics
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "analysis"))
from indexsim import trace  # noqa: E402  (the package's own .itr reader)


def gaps_of(path):
    _meta, records = trace.read(path)
    names, ctas = {}, defaultdict(list)
    for r in records:
        if r["type"] == "kernel":
            names[r["id"]] = r["name"]
        elif r["type"] == "cta":
            ctas[(r["kernel"], r["sm"])].append((r["start_ns"], r["end_ns"]))
    gaps = defaultdict(list)
    for (k, _sm), cs in ctas.items():
        # A slot freed by an end is taken by the next start after it (first in, first out): if each
        # start follows an end by the same turnover T, the pairs are right whatever T is.
        ends = sorted(e for _, e in cs)
        i = 0
        for s in sorted(s for s, _ in cs):
            if i < len(ends) and ends[i] <= s:
                gaps[names.get(k, str(k))].append(s - ends[i])
                i += 1
    return gaps


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="*")
    ap.add_argument("--min-gaps", type=int, default=100, help="kernels with fewer reused slots are left out")
    a = ap.parse_args()
    traces = a.traces or sorted(glob.glob(os.path.join(ROOT, "traces", "captured", "*.itr")))
    if not traces:
        sys.exit("cta_turnover: no traces")
    by_name = defaultdict(list)
    for t in traces:
        try:
            for name, g in gaps_of(t).items():
                by_name[name].extend(g)
        except trace.TraceError as e:
            sys.exit(f"cta_turnover: {e}")
    print("| kernel | gaps | p10 ns | median ns | p90 ns |")
    print("|---|---:|---:|---:|---:|")
    every = []
    for name in sorted(by_name):
        g = by_name[name]
        if len(g) < a.min_gaps:
            continue
        every.extend(g)
        d = statistics.quantiles(g, n=10)
        print(f"| {name} | {len(g)} | {d[0]:.0f} | {statistics.median(g):.0f} | {d[-1]:.0f} |")
    if every:
        d = statistics.quantiles(every, n=10)
        print(f"| all | {len(every)} | {d[0]:.0f} | {statistics.median(every):.0f} | {d[-1]:.0f} |")


if __name__ == "__main__":
    main()
