# SPDX-License-Identifier: Apache-2.0
"""scripts/cta_turnover.py measures the block scheduler's turnover from captured CTA stamps; the H200
preset's `gpu.cta_launch_ns` cites its median for the read kernels of the copy traces. This reruns
the measurement on those traces and checks the preset still says what the stamps say."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_h200_preset_turnover_is_the_read_kernels_median_gap():
    traces = [os.path.join(ROOT, "traces", "captured", f"copy_{s}.itr") for s in ("256MiB", "512MiB")]
    out = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "cta_turnover.py"), *traces],
                         check=True, capture_output=True, text=True).stdout
    row = [line for line in out.splitlines() if line.startswith("| read |")]
    assert row, out
    gaps, p10, median, p90 = (int(x) for x in row[0].split("|")[2:6])
    assert gaps > 10000 and p10 <= median <= p90, row
    preset = open(os.path.join(ROOT, "configs", "hardware", "h200.yaml")).read()
    value = float(re.search(r"^\s*cta_launch_ns:\s*([\d.]+)", preset, re.M).group(1))
    assert value == median, (value, row)
