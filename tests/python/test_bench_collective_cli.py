# SPDX-License-Identifier: Apache-2.0
"""`indexsim bench collective`, `bench speed` and `run --phase prefill` from the command line: a
collective's bus bandwidth is its algorithm bandwidth times 2(n-1)/n (all-reduce) as nccl-tests
prints it, and bad input stops with one error naming the value and a non-zero exit."""
import json
import subprocess

import pytest


def run(exe, *args):
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=600)


def test_all_reduce_rows_follow_nccl_tests_definitions(exe):
    r = run(exe, "bench", "collective", "--hardware", "h200", "--op", "all_reduce", "--gpus", "8",
            "--min-bytes", "1K", "--max-bytes", "64K", "--factor", "8", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    assert [x["bytes"] for x in rows] == [1024, 8192, 65536]
    for x in rows:
        assert x["algbw_GBps"] == pytest.approx(x["bytes"] / (x["time_us"] * 1e-6) / 1e9, rel=1e-9)
        assert x["busbw_GBps"] == pytest.approx(x["algbw_GBps"] * 2 * 7 / 8, rel=1e-9)
        assert x["launch"]["library"] == "nccl"


def test_a_one_thread_loop_bounds_the_time_from_below(exe):
    # nccl-tests with one thread driving every GPU (-g 8): time = max(kernel, 8 x host cost a GPU).
    # 1000 us a GPU sets a 1 KiB all-reduce's time to 8000 us; 0 (the default) leaves the kernel's.
    def row(*extra):
        r = run(exe, "bench", "collective", "--hardware", "h200", "--op", "all_reduce", "--gpus", "8",
                "--bytes", "1K", "--json", *extra)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)[0]
    plain, looped = row(), row("--host-us-per-gpu", "1000")
    assert not plain["host_bound"] and plain["time_us"] == plain["kernel_us"]
    assert looped["host_bound"] and looped["time_us"] == pytest.approx(8000.0)
    assert looped["kernel_us"] == plain["kernel_us"] < 8000
    assert looped["busbw_GBps"] == pytest.approx(1024 * 2 * 7 / 8 / 8000e-6 / 1e9, rel=1e-9)


@pytest.mark.parametrize("args, needle", [
    (["--op", "all_reduce", "--gpus", "16", "--bytes", "1K"], "gpus_per_switch_domain"),  # beyond the domain
    (["--op", "broadcast", "--gpus", "8", "--bytes", "1K"], "broadcast"),                # unknown op
    (["--op", "all_reduce", "--gpus", "8", "--bytes", "12Q"], "12Q"),                    # not a size
    (["--op", "all_reduce", "--gpus", "8", "--bytes", "1K", "--host-us-per-gpu", "-1"], "--host-us-per-gpu"),
])
def test_bad_collective_input_is_one_named_error(exe, args, needle):
    r = run(exe, "bench", "collective", "--hardware", "h200", *args)
    assert r.returncode != 0
    assert needle in r.stderr
    assert "Traceback" not in r.stderr and "terminate" not in r.stderr


def test_bench_speed_lists_its_fixed_cases_and_refuses_an_unknown_one(exe):
    r = run(exe, "bench", "speed", "--list")
    assert r.returncode == 0, r.stderr
    assert "decode-glm5-1m" in r.stdout and "prefill-tiny-sampled" in r.stdout
    assert "decode-glm52-1m-systemc" in r.stdout
    r = run(exe, "bench", "speed", "--only", "nope")
    assert r.returncode != 0 and "nope" in r.stderr
    # --only is repeatable; any unknown name among them is refused before anything runs.
    r = run(exe, "bench", "speed", "--only", "decode-glm52-1m", "--only", "nope")
    assert r.returncode != 0 and "'nope'" in r.stderr


def test_prefill_refuses_a_chunk_above_the_context(exe):
    r = run(exe, "run", "--hardware", "h200", "--workload", "glm-5", "--phase", "prefill", "--context", "4096",
            "--chunk", "8192", "--fast")
    assert r.returncode != 0
    assert "8192" in r.stderr and "4096" in r.stderr
