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
import re
import statistics
import subprocess
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CTA = re.compile(r" cta kernel=(\d+) cta=\d+ sm=(\d+) start_ns=(\d+) end_ns=(\d+)")
KERNEL = re.compile(r" kernel (\d+) (\S+) ")


def gaps_of(exe, path):
    res = subprocess.run([exe, "trace", "dump", path], capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"cta_turnover: {path}: {res.stderr.strip() or 'indexsim trace dump failed'}")
    out = res.stdout
    names, ctas = {}, defaultdict(list)
    for line in out.splitlines():
        m = CTA.search(line)
        if m:
            k, sm, s, e = map(int, m.groups())
            ctas[(k, sm)].append((s, e))
            continue
        m = KERNEL.search(line)
        if m:
            names[int(m.group(1))] = m.group(2)
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
    ap.add_argument("--exe", default=os.path.join(os.environ.get("INDEXSIM_BUILD_DIR", os.path.join(ROOT, "build")),
                                                  "sim", "indexsim"))
    a = ap.parse_args()
    traces = a.traces or sorted(glob.glob(os.path.join(ROOT, "traces", "captured", "*.itr")))
    if not traces:
        sys.exit("cta_turnover: no traces")
    by_name = defaultdict(list)
    for t in traces:
        for name, g in gaps_of(a.exe, t).items():
            by_name[name].extend(g)
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
