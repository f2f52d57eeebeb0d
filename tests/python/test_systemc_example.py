# SPDX-License-Identifier: Apache-2.0
"""The installed C++ package and the SystemC example (examples/systemc): `cmake --install` of the
build, the example configured with find_package(IndexSim) against that prefix, built, and run from
another directory. Its scratchpad (a user's loosely-timed TLM-2.0 target of latency L, bound to the
H200's `sram` region) must give exactly the step of the native run whose `sram` is an ideal memory
of latency L (impl fixed_latency), and its native line the preset's step: so the difference it
prints is exactly what the region's latency implies, step(ideal L) - step(SRAM model)."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
import golden  # noqa: E402

# The golden runs' two-layer GLM-5, so that each run takes well under a second.
TINY = golden.TINY
# The scratchpad's capacity and peak, as the example declares them (the SRAM preset's).
IDEAL = ("hardware.memory.sram={impl: fixed_latency, capacity_GiB: 0.01171875, peak_bandwidth_GBps: 22732.8, "
         "latency_ns: %s}")


def build_dir():
    b = os.environ.get("INDEXSIM_BUILD_DIR", "build")
    return b if os.path.isabs(b) else str(REPO / b)


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not installed")  # setup.sh installs it; CI always has it
    tmp = tmp_path_factory.mktemp("installed")
    prefix, ex = tmp / "prefix", tmp / "example"
    subprocess.run(["cmake", "--install", build_dir(), "--prefix", str(prefix)], check=True, capture_output=True)
    assert (prefix / "lib" / "cmake" / "IndexSim" / "IndexSimConfig.cmake").is_file()
    assert (prefix / "include" / "indexsim" / "sim" / "engine" / "systemc.hpp").is_file()
    assert (prefix / "share" / "indexsim" / "configs" / "hardware" / "h200.yaml").is_file()
    cfg = subprocess.run(["cmake", "-S", str(REPO / "examples" / "systemc"), "-B", str(ex),
                          f"-DCMAKE_PREFIX_PATH={prefix}", "-DCMAKE_BUILD_TYPE=Release"], capture_output=True, text=True)
    assert cfg.returncode == 0, cfg.stdout[-2000:] + cfg.stderr[-2000:]
    b = subprocess.run(["cmake", "--build", str(ex)], capture_output=True, text=True)
    assert b.returncode == 0, b.stdout[-3000:] + b.stderr[-2000:]
    return ex / "scratchpad", tmp


def run_example(binary, cwd, latency_ns):
    args = [str(binary), "--latency-ns", str(latency_ns), "--context", "16384"]
    for i in range(0, len(TINY), 2):
        args += ["--set", TINY[i + 1]]
    out = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    values = {}
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].replace("_", "").isalnum():
            values[parts[0]] = float(parts[1])
    return values


def native_step_us(exe, sets):
    args = [exe, "run", "--hardware", "h200", "--workload", "glm-5", "--techniques", "indexshare", "--context", "16384",
            "--fast", "--json"] + TINY
    for s in sets:
        args += ["--set", s]
    out = subprocess.run(args, cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)["metrics"]["step_time"]["value"]


@pytest.mark.parametrize("latency_ns", ["40", "400"])
def test_the_example_built_against_the_installed_package_differs_by_what_its_latency_implies(exe, example, latency_ns):
    binary, cwd = example
    got = run_example(binary, cwd, latency_ns)
    # Its native line is the preset's run; its scratchpad line the ideal memory of latency L, to the bit.
    assert got["step_us_native_sram"] == native_step_us(exe, [])
    ideal = native_step_us(exe, [IDEAL % latency_ns])
    assert got["step_us_scratchpad"] == ideal
    assert got["difference_us"] == pytest.approx(ideal - got["step_us_native_sram"], abs=1e-9)
    # The region held the first layer's indexer cache: every request it served was of that class.
    assert got["scratchpad_reads"] > 0
    assert got["scratchpad_indexer_cache_requests"] == got["scratchpad_reads"] + got["scratchpad_writes"]


def test_a_slower_scratchpad_gives_a_longer_step(example):
    binary, cwd = example
    fast, slow = run_example(binary, cwd, 40), run_example(binary, cwd, 4000)
    assert slow["step_us_scratchpad"] > fast["step_us_scratchpad"]
    assert slow["step_us_native_sram"] == fast["step_us_native_sram"]
