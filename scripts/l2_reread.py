#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How much of a buffer read twice the L2 keeps: the H200 against the model.

Measured: Nsight Compute's DRAM bytes of `kernels/membench_cupy.py l2_policy_ncu` (all SMs read a
buffer after a read-only flush, then read it again; traces/captured/ncu/ncu_l2_policy*.csv). The
share of the second read that comes from DRAM is its DRAM bytes over the first's.
Model: `indexsim bench memory --target system` replaying the same two passes as a memory trace
(model() says how); the share is (L2 read misses - one pass's lines) / lines:
the preset, the preset without far-read copies (l2.replicate_far_reads), and without copies and with
hashed sets (l2.set_index), the model before either was measured.

Usage: python3 scripts/l2_reread.py [--build DIR] [--hardware NAME]   (about two minutes)
Then the strided buffers (traces/captured/ncu/ncu_l2_stride.csv) the same way. Also prints each measured sequence's DRAM traffic and L2 lookups per byte of the buffer (--sequences).
"""
import argparse
import csv
import json
import os
import random
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NCU = [os.path.join(ROOT, "traces", "captured", "ncu", f) for f in ("ncu_l2_policy.csv", "ncu_l2_policy_sizes.csv")]
NCU_STRIDE = os.path.join(ROOT, "traces", "captured", "ncu", "ncu_l2_stride.csv")


def sequences(path):
    """[(sequence name, [kernel metrics...])] in launch order, from one application-replay CSV."""
    names, rows, header = [], {}, None
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines:
        m = re.match(r"# l2p sequence (\S+):", line)
        if m:
            if m.group(1) in names:
                break  # the next replay pass prints them again
            names.append(m.group(1))
    for r in csv.reader(lines):
        if r and r[0] == "ID":
            header = r
        elif header and len(r) == len(header):
            d = dict(zip(header, r))
            rows.setdefault(int(d["ID"]), {})[d["Metric Name"]] = float(d["Metric Value"].replace(",", ""))
    kernels = [rows[k] for k in sorted(rows)]
    out, i = [], 0
    for name in names:
        n = 1 if re.match(r"(memset|readflush)_read_idle", name) else 2  # a prep kernel, then the probe
        out.append((name, kernels[i:i + n]))
        i += n
    if i != len(kernels):
        sys.exit(f"{path}: {len(kernels)} profiled kernels for {i} in the printed sequences")
    return out


def measured(paths=NCU, pattern=r"readflush_read_read_idle0us_(\d+)MiB"):
    """{key: share of the second read from DRAM}; key = the pattern's groups as ints."""
    share = {}
    for path in paths:
        for name, ks in sequences(path):
            m = re.match(pattern, name)
            if m:
                key = tuple(int(g) for g in m.groups())
                share[key[0] if len(key) == 1 else key] = ks[1]["dram__bytes_read.sum"] / ks[0]["dram__bytes_read.sum"]
    return share


def model(exe, hardware, mib, copies=True, index=None, stride=1):
    """Share of the second pass from DRAM: two passes over whole lines `stride` lines apart, as a
    memory trace (dramsim3 format) replayed back to back by `bench memory --target system`. The
    trace's requests go to the requesters in turn (request i to requester i mod 132, whose partition is
    i mod 2); in the second pass each pair of neighbours is swapped or not by a fixed coin, so that a
    line's second reader is in either partition, independent of its first, as on the H200 (whose
    re-read makes 1.25 lookups per byte, not 1.5 or 1)."""
    lines = mib * 1024 * 1024 // 128
    coin = random.Random(1)
    second = list(range(lines))
    for k in range(0, lines - 1, 2):
        if coin.random() < 0.5:
            second[k], second[k + 1] = second[k + 1], second[k]
    with tempfile.NamedTemporaryFile("w", suffix=".trace", delete=False) as f:
        for order in (range(lines), second):
            f.writelines(f"0x{l * stride * 128:X} READ 0\n" for l in order)
    cmd = [exe, "bench", "memory", "--hardware", hardware, "--target", "system", "--trace", f.name,
           "--format", "dramsim3", "--back-to-back", "--bytes", "128", "--requesters", "132",
           "--set", f"hardware.l2.replicate_far_reads={'true' if copies else 'false'}", "--json"]
    if index:
        cmd[-1:-1] = ["--set", f"hardware.l2.set_index={index}"]
    try:
        d = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    finally:
        os.unlink(f.name)
    st = {s["statistic"]: s["value"] for s in d["stats"] if s["component"] == "l2"}
    return (st["read_misses"] - lines) / lines


def stride_table(exe, hardware):
    """Markdown lines: strided buffers read twice, measured and modelled (preset; hashed sets)."""
    meas = measured([NCU_STRIDE], r"readflush_strided(\d+)_read_read_idle0us_(\d+)MiB")
    out = ["| MiB of lines | stride, lines | H200: 2nd read from DRAM | model: the preset | model: hashed sets |",
           "|---:|---:|---:|---:|---:|"]
    for stride, mib in sorted(meas, key=lambda k: (k[1], k[0])):
        if stride not in (1, 4, 16, 96):
            continue
        sim = [model(exe, hardware, mib, True, index, stride) for index in (None, "hashed")]
        out.append(f"| {mib} | {stride} | {100 * meas[(stride, mib)]:.0f} % | {100 * sim[0]:.0f} % | {100 * sim[1]:.0f} % |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.environ.get("INDEXSIM_BUILD_DIR", os.path.join(ROOT, "build")))
    ap.add_argument("--hardware", default="h200")
    ap.add_argument("--sequences", action="store_true", help="print every measured sequence")
    a = ap.parse_args()
    if a.sequences:
        for path in NCU:
            for name, ks in sequences(path):
                mib = int(re.search(r"_(\d+)MiB$", name).group(1))
                for k in ks:
                    lookups = 32 * (k["lts__t_sectors_op_read.sum"] + k["lts__t_sectors_op_write.sum"])
                    print(f"{name:38s} {k['dram__bytes_read.sum'] / 1e6:6.1f} MB read from DRAM, "
                          f"{k['dram__bytes_write.sum'] / 1e6:6.1f} MB written; L2 lookups per buffer byte "
                          f"{lookups / (mib << 20):.2f}")
        print()
    exe = os.path.join(a.build, "sim", "indexsim")
    print("\n".join(table(exe, a.hardware)))
    print()
    print("\n".join(stride_table(exe, a.hardware)))


def table(exe, hardware):
    """Markdown lines: the share of the second read from DRAM by size, measured and modelled."""
    meas = measured()
    variants = [("the preset", True, None), ("no copies", False, None), ("hashed sets, no copies", False, "hashed")]
    out = ["| MiB read twice | H200: 2nd read from DRAM | " + " | ".join(f"model: {v[0]}" for v in variants) + " |",
           "|---:|---:|" + "---:|" * len(variants)]
    err = [[] for _ in variants]
    for mib in sorted(meas):
        sim = [model(exe, hardware, mib, copies, index) for _, copies, index in variants]
        for e, x in zip(err, sim):
            e.append(abs(x - meas[mib]))
        out.append(f"| {mib} | {100 * meas[mib]:.0f} % | " + " | ".join(f"{100 * x:.0f} %" for x in sim) + " |")
    out.append("| mean absolute difference, points | | " +
               " | ".join(f"{100 * sum(e) / len(e):.1f}" for e in err) + " |")
    return out

if __name__ == "__main__":
    main()
