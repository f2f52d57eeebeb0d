# SPDX-License-Identifier: Apache-2.0
"""The command line and the Python API behave as issue 24 asks: every command's --help is the
output (stdout, status 0), --version names the code version, no SystemC banner, failures are typed
Python exceptions with the tool's one-line message, and paths are the caller's."""
import os
import re
import subprocess

import pytest

import indexsim
from conftest import REPO

HELP = [["--help"], ["accuracy", "--help"], ["bench", "--help"], ["bench", "memory", "--help"],
        ["bench", "speed", "--help"], ["bench", "kernel", "--help"], ["bench", "collective", "--help"],
        ["run", "--help"], ["study", "--help"], ["sweep", "--help"], ["merge", "--help"], ["trace", "--help"],
        ["trace", "gen", "--help"], ["trace", "info", "--help"], ["trace", "check", "--help"],
        ["trace", "dump", "--help"], ["trace", "export", "--help"], ["validate", "--help"]]
SMALL = dict(hardware="h200", workload="glm-5", context=1024, fast=True)


def _env():
    return {k: v for k, v in os.environ.items() if k != "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE"}


@pytest.mark.parametrize("args", HELP, ids=" ".join)
def test_help_is_the_output(exe, args):
    r = subprocess.run([exe, *args], capture_output=True, text=True, timeout=60, env=_env())
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert "usage: indexsim" in r.stdout and r.stderr == "", (r.stdout[:200], r.stderr[:200])
    assert "Copyright" not in r.stdout + r.stderr  # the SystemC banner is off


def test_every_registered_command_is_in_the_help_loop(exe):
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60).stdout
    listed = re.findall(r"^  (\w+)\t", out, re.M)
    assert listed and set(listed) <= {a[0] for a in HELP}, listed


def test_version_names_the_code_version(exe):
    r = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60, env=_env())
    assert r.returncode == 0 and r.stderr == ""
    # <semver>+<12 hex digits of the commit>[.modified], or +unknown outside a git checkout
    assert re.fullmatch(r"indexsim \d+\.\d+\.\d+\+([0-9a-f]{12}(\.modified)?|unknown)\n", r.stdout), r.stdout


@pytest.mark.parametrize("kwargs, kind, needles", [
    (dict(sets=["hardware.l2.wayz=3"]), indexsim.ConfigError, ["l2.wayz", "h200.yaml"]),
    (dict(context=4_000_000, batch=8, sets=["workload.model.max_position_embeddings=4000000"]), indexsim.PlacementError, ["GiB", "hint: --set techniques.placement.cxl_enabled=true"]),
    (dict(phase="sideways"), indexsim.UsageError, ["--phase", "sideways"]),
])
def test_failures_are_typed_exceptions_with_the_tools_message(exe, kwargs, kind, needles):
    with pytest.raises(kind) as e:
        indexsim.run(**{**SMALL, **kwargs})
    assert isinstance(e.value, indexsim.IndexSimError) and e.value.returncode == 2
    assert "\n" not in str(e.value) and "Copyright" not in str(e.value)
    for n in needles:
        assert n in str(e.value), str(e.value)


def test_a_missing_trace_is_a_trace_error(exe, tmp_path):
    with pytest.raises(indexsim.TraceError, match="nope.itr"):
        indexsim.run(hardware="h200", trace=str(tmp_path / "nope.itr"))


def test_relative_paths_are_the_callers(exe, tmp_path, monkeypatch):
    # Before: the package ran the binary in its own directory, so db="rel.sqlite" landed there.
    monkeypatch.chdir(tmp_path)
    r = indexsim.run(**SMALL, db="rel.sqlite", timeline="rel.json")
    assert r.step_us > 0
    assert (tmp_path / "rel.sqlite").is_file() and (tmp_path / "rel.json").is_file()
    assert len(indexsim.load("rel.sqlite")) == 1


@pytest.mark.parametrize("hardware", sorted(p.stem for p in (REPO / "configs" / "hardware").glob("*.yaml")))
def test_every_hardware_preset_benches_its_memory(exe, hardware):
    """Every preset loads where only its memory is used (a processor section it does not run,
    a GPU's or an NPU's, is no unknown key there)."""
    r = subprocess.run([exe, "bench", "memory", "--hardware", hardware, "--pattern", "stream", "--requests", "200"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
