# SPDX-License-Identifier: Apache-2.0
"""`indexsim bench kernel` and `validate --published` from the command line: the figure a kernel
benchmark prints is its nominal work over its kernel time, and bad input stops with one error line
naming what is wrong and a non-zero exit."""
import json
import subprocess

import pytest


def run(exe, *args):
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=600)


def test_gemm_tflops_is_2mnk_over_the_kernel_time(exe):
    r = run(exe, "bench", "kernel", "--hardware", "h800", "gemm", "--m", "64", "--n", "2112", "--k", "7168",
            "--dtype", "fp8", "--fast", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    us = d["metrics"]["kernel_time"]["value"]
    tflops = d["metrics"]["achieved_tflops"]["value"]
    assert tflops == pytest.approx(2 * 64 * 2112 * 7168 / (us * 1e-6) / 1e12, rel=1e-9)
    # DeepGEMM's launch for this shape: 64x16 tiles, one full wave of 132 CTAs (get_best_configs).
    launch = d["config"]["step"]["trace"]["launch"]
    assert (launch["library"], launch["block_m"], launch["block_n"]) == ("deepgemm-fp8", 64, 16)


@pytest.mark.parametrize("args, needle", [
    (["gemm", "--m", "64", "--n", "64", "--k", "64", "--kk", "1"], "kk"),          # unknown shape key
    (["gemm", "--m", "64", "--n", "64"], "k"),                                        # missing key
    (["gemm", "--m", "64", "--n", "64", "--k", "64", "--dtype", "fp8"], "fp8"),     # no FP8 on an A100
    (["conv", "--m", "1"], "conv"),                                                   # unknown kernel
])
def test_bad_kernel_input_is_one_named_error(exe, args, needle):
    r = run(exe, "bench", "kernel", "--hardware", "a100", *args)
    assert r.returncode != 0
    assert needle in r.stderr
    assert "Traceback" not in r.stderr and "terminate" not in r.stderr


def test_published_unknown_case_is_refused(exe):
    r = run(exe, "validate", "--published", "--case", "no-such-case")
    assert r.returncode != 0
    assert "no-such-case" in r.stderr
