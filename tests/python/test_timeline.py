# SPDX-License-Identifier: Apache-2.0
"""`run --timeline`: a Chrome/Perfetto trace-event file (sim/engine/timeline.hpp) checked against the
format (every event's phase and fields, named tracks, paired flows bound to slices) and against the
run (every kernel on its stream, reused kernels drawn on the unit groups, counters in range). A
Perfetto trace processor loads it too where one is installed (it cannot be installed offline:
the Python package downloads its binary on first use)."""
import json
import os
import shutil
import subprocess
from collections import Counter

import pytest

from test_study import TINY

PHASES = {"X", "M", "C", "s", "f"}


@pytest.fixture(scope="module")
def timeline(exe, tmp_path_factory):
    d = tmp_path_factory.mktemp("timeline")
    path = d / "t.json"
    sets = [a for s in TINY for a in ("--set", s)]
    r = subprocess.run([exe, "run", "--hardware", "h200", "--workload", "glm-5", "--context", "4096", "--fast",
                        "--techniques", "all", "--json", "--kernels", "--timeline", str(path), *sets],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(path.read_text()), json.loads(r.stdout)


def test_every_event_is_well_formed(timeline):
    doc, _ = timeline
    ev = doc["traceEvents"]
    assert doc["displayTimeUnit"] == "ns" and ev
    for e in ev:
        assert e["ph"] in PHASES and isinstance(e["pid"], int) and isinstance(e["name"], str), e
        if e["ph"] == "X":
            assert e["dur"] >= 0 and e["ts"] >= 0 and isinstance(e["tid"], int), e
        if e["ph"] == "C":
            assert e["args"] and all(isinstance(v, (int, float)) for v in e["args"].values()), e


def test_every_track_and_process_is_named(timeline):
    ev = timeline[0]["traceEvents"]
    named = {(e["pid"], e["tid"]) for e in ev if e["name"] == "thread_name"}
    used = {(e["pid"], e["tid"]) for e in ev if e["ph"] in ("X", "s", "f")}
    assert used <= named, used - named
    processes = {e["pid"] for e in ev if e["name"] == "process_name"}
    assert {e["pid"] for e in ev} <= processes
    streams = [e["args"]["name"] for e in ev if e["name"] == "thread_name" and e["pid"] == 1]
    assert all(n.startswith("stream ") and ":" in n for n in streams), streams


def test_kernels_are_drawn_where_they_ran(timeline):
    ev, run = timeline[0]["traceEvents"], timeline[1]
    kernels = run["kernels"]
    on_streams = [e for e in ev if e["ph"] == "X" and e["pid"] == 1]
    assert sorted(e["name"] for e in on_streams) == sorted(k["name"] for k in kernels)
    reused = [k for k in kernels if k["simulated"] == "reused"]
    assert reused, "the tiny model's second layer should reuse the first"
    groups = len({e["tid"] for e in ev if e["name"] == "thread_name" and e["pid"] == 2})
    drawn = Counter(e["name"] for e in ev if e["ph"] == "X" and e["pid"] == 2 and e.get("cat") == "reused")
    # a reused kernel covers every unit group for its duration
    assert drawn == Counter({f"{k['name']} (reused)": groups for k in reused})


def test_counters_are_in_range(timeline):
    ev = timeline[0]["traceEvents"]
    counters = [e for e in ev if e["ph"] == "C"]
    names = {e["name"] for e in counters}
    assert {"accepted bandwidth (GB/s)", "hit rate", "SM occupancy"} <= names, names
    for e in counters:
        for v in e["args"].values():
            assert v >= 0
            if e["name"] in ("hit rate", "SM occupancy"):
                assert v <= 1 + 1e-9, e
    assert any(e["args"].get("hbm", 0) > 0 for e in counters if e["name"].startswith("accepted"))
    ts = [e["ts"] for e in counters if e["name"] == "SM occupancy"]
    assert ts == sorted(ts)


def test_flows_pair_up_and_bind_to_slices(timeline):
    ev = timeline[0]["traceEvents"]
    starts = {e["id"]: e for e in ev if e["ph"] == "s"}
    ends = {e["id"]: e for e in ev if e["ph"] == "f"}
    assert starts and starts.keys() == ends.keys()
    slices = [e for e in ev if e["ph"] == "X" and e["pid"] == 1]

    def inside(p):
        return any(s["tid"] == p["tid"] and s["ts"] <= p["ts"] <= s["ts"] + s["dur"] for s in slices)

    for i, s in starts.items():
        f = ends[i]
        assert f["bp"] == "e" and s["tid"] != f["tid"] and s["ts"] <= f["ts"] + 1e-6
        assert inside(s) and inside(f), (s, f)


def test_a_perfetto_trace_processor_loads_it_where_one_is_installed(timeline, tmp_path):
    shell = os.environ.get("PERFETTO_TRACE_PROCESSOR") or shutil.which("trace_processor_shell")
    if not shell:
        pytest.skip("no Perfetto trace_processor_shell here (PERFETTO_TRACE_PROCESSOR or PATH); "
                    "it cannot be installed offline")
    path = tmp_path / "t.json"
    path.write_text(json.dumps(timeline[0]))
    q = subprocess.run([shell, "-q", "/dev/stdin", str(path)], input="select count(*) from slice;",
                       capture_output=True, text=True, timeout=120)
    assert q.returncode == 0, q.stderr


def test_an_npus_tasks_have_tracks_of_their_own(exe, tmp_path):
    """With an NPU (h200-npu) its cores get unit-group tracks after the SMs', and the kernels placed
    on it (top-k here, by kind) are drawn there and nowhere else."""
    path = tmp_path / "npu.json"
    sets = [a for s in TINY for a in ("--set", s)]
    r = subprocess.run([exe, "run", "--hardware", "h200-npu", "--workload", "glm-5", "--context", "4096", "--fast",
                        "--set", "techniques.placement.npu_kernels=[topk]", "--json", "--kernels",
                        "--timeline", str(path), *sets], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    ev = json.loads(path.read_text())["traceEvents"]
    groups = {e["tid"]: e["args"]["name"] for e in ev if e["name"] == "thread_name" and e["pid"] == 2}
    npu_tids = {t for t, n in groups.items() if n.startswith("NPU core")}
    assert npu_tids and all(groups[t].startswith("SM") for t in set(groups) - npu_tids), groups
    assert min(npu_tids) > max(set(groups) - npu_tids)
    on_npu = {e["name"] for e in ev if e.get("pid") == 2 and e["ph"] == "X" and e["tid"] in npu_tids}
    assert on_npu, "no NPU task drawn"
    kinds = {k["name"]: (k["kind"], k["processor"]) for k in json.loads(r.stdout)["kernels"]}
    base = {n.split(" (")[0] for n in on_npu}  # reused or extrapolated kernels carry a suffix
    assert all(kinds[n] == ("topk", "NPU core") for n in base), base
