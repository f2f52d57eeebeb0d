# SPDX-License-Identifier: Apache-2.0
"""Bad input from issue 25's matrix: numbers a count cannot hold. Each reproducer exits with status 2
(never a signal, never 0) and one error line that names the key or argument and its value.

Before the fix, a 32-bit key at 2**32 wrapped to 0 and divided by it (SIGFPE), 1e20 was cast to an
integer (undefined), a port count of 2**32 - 1 died in std::bad_alloc, and --batch 4294967297 ran
as batch 1."""
import os
import random
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

RUN = ["run", "--hardware", "h200", "--workload", "glm-5", "--context", "1024", "--fast"]
EXTERNAL_SRAM = ("hardware.memory.sram={impl: tlm_target, capacity_GiB: 0.01, peak_bandwidth_GBps: 100, "
                 "idle_read_latency_ns: 10, coding_style: loosely_timed}")


@pytest.mark.parametrize("args, needle", [
    (["--set", "hardware.l2.ways=4294967296"], "l2.ways"),
    (["--set", "hardware.l2.sector_B=4294967296"], "l2.sector_B"),
    (["--set", "hardware.l2.partitions=4294967296"], "l2.partitions"),
    (["--set", "hardware.memory.cxl.slot_B=4294967296"], "memory.cxl.slot_B"),
    (["--set", "hardware.memory.sram.line_B=4294967296"], "memory.sram.line_B"),
    (["--set", "hardware.memory.sram.ways=4294967296"], "memory.sram.ways"),
    (["--set", "hardware.noc.sm_ports=4294967296"], "noc.sm_ports"),
    (["--set", "hardware.noc.sm_ports=4294967295"], "noc.sm_ports"),
    (["--set", "hardware.noc.memory_ports=4294967295"], "noc.memory_ports"),
    (["--set", "hardware.noc.line_B=4294967296"], "noc.line_B"),
    (["--set", "hardware.gpu.sector_bytes=4294967296"], "gpu.sector_bytes"),
    (["--set", "hardware.memory.hbm.stacks=1e20"], "memory.hbm.stacks"),
    (["--set", "hardware.gpu.sm_clock_MHz=1e-300"], "gpu.sm_clock_MHz"),   # ran a 10^13-us step to exit 0
    (["--set", "hardware.l2.clock_MHz=1e-300"], "l2.clock_MHz"),
    (["--set", "hardware.noc.clock_MHz=1e9"], "noc.clock_MHz"),
    (["--set", "workload.kernels.indexer_score.tile_tokens=4294967296"], "tile_tokens"),
    (["--batch", "4294967297"], "--batch"),
    (["--batch", "1e30"], "--batch"),
    (["--queries", "nan"], "--queries"),
    (["--chunk", "-1"], "--chunk"),
    (["--set", "hardware.nosuch.key=1"], "nosuch"),        # was yaml-cpp's "invalid node", no file
    (["--set", "hardware.l2.x.y=1"], "l2.x"),
    (["--set", "hardware..x=1"], "empty key"),
])
def test_a_number_a_count_cannot_hold_is_a_one_line_error(exe, args, needle):
    r = subprocess.run([exe, *RUN, *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, (r.returncode, r.stderr[-400:])
    lines = [l for l in r.stderr.splitlines() if "error" in l or needle in l]
    assert len(lines) == 1, r.stderr[-400:]
    assert needle in lines[0] and args[-1].split("=")[-1] in lines[0], lines[0]
    if args[0] == "--set":
        assert "h200.yaml" in lines[0] or "glm-5.yaml" in lines[0], lines[0]   # the file is named


@pytest.mark.parametrize("args, needle", [
    (["--requesters", "4294967296"], "--requesters"),
    (["--bytes", "1e30"], "--bytes"),
])
def test_bench_memory_counts_are_checked_before_they_are_narrowed(exe, args, needle):
    r = subprocess.run([exe, "bench", "memory", "--hardware", "h200", "--pattern", "stream", "--requests", "10", *args],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, (r.returncode, r.stderr[-400:])
    assert needle in r.stderr


def test_merge_refuses_itself_and_a_missing_shard_at_once(exe, tmp_path):
    # Merging a database into itself waited 60 s on its own lock; a missing shard was created
    # empty and reported as merged.
    db = tmp_path / "a.sqlite"
    r = subprocess.run([exe, *RUN, "--set", "workload.model.num_layers=2",
                        "--set", "workload.layers=[{first: 0, last: 1, attention: dsa, indexer: full, mlp: dense}]",
                        "--db", str(db)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-400:]
    before = db.read_bytes()
    for shard, needle in [(db, "itself"), (tmp_path / "missing.sqlite", "no such file")]:
        r = subprocess.run([exe, "merge", str(db), str(shard)], capture_output=True, text=True, timeout=20)
        assert r.returncode == 2 and needle in r.stderr and str(shard) in r.stderr, r.stderr
    assert not (tmp_path / "missing.sqlite").exists()
    assert db.read_bytes() == before


def test_a_constraint_nested_too_deep_is_an_error_not_a_stack_overflow(exe, tmp_path):
    spec = tmp_path / "deep.yaml"
    spec.write_text("name: deep\ndescription: x\nbase: {hardware: h200, workload: glm-5, techniques: baseline}\n"
                    "axes:\n  step.context: [1024, 2048]\n"
                    f"constraints:\n  - \"{'not ' * 75000}step.context == 1024\"\n")
    r = subprocess.run([exe, "sweep", str(spec), "--db", str(tmp_path / "d.sqlite"), "--dry-run"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, (r.returncode, r.stderr[-300:])
    assert "nested deeper than 64" in r.stderr and "constraints.0" in r.stderr


def test_a_key_given_twice_is_an_error_naming_it(exe, tmp_path):
    # yaml-cpp kept the first `ways:` and ignored the second without a word.
    hw = tmp_path / "dup.yaml"
    hw.write_text("base: h200\nname: dup\nl2:\n  ways: 16\n  ways: 8\n")
    r = subprocess.run([exe, "run", "--hardware", str(hw), "--workload", "glm-5", "--context", "1024"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "l2.ways" in r.stderr and "twice" in r.stderr, r.stderr[-300:]


@pytest.mark.parametrize("flag, value", [("--footprint-MiB", "-5"), ("--footprint-MiB", "nan"),
                                         ("--write-fraction", "inf"), ("--write-fraction", "2")])
def test_bench_memory_real_options_are_finite_and_in_range(exe, flag, value):
    r = subprocess.run([exe, "bench", "memory", "--hardware", "h200", "--pattern", "mix", "--requests", "10", flag, value],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and flag in r.stderr, (r.returncode, r.stderr[-300:])


def test_a_bad_database_fails_before_the_run_and_is_left_as_it_was(exe, tmp_path):
    # It used to fail after the simulation with "sqlite step/prepare", the result lost; the handle leaked.
    for name, content in [("notdb.sqlite", b"not a database at all\n" * 50), ("truncated.sqlite", b"SQLite format 3\x00")]:
        db = tmp_path / name
        db.write_bytes(content)
        r = subprocess.run([exe, *RUN, "--db", str(db)], capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and str(db) in r.stderr, r.stderr[-300:]
        assert "wall" not in r.stdout   # no simulation ran
        assert db.read_bytes() == content


def test_a_directory_or_a_pipe_given_as_a_trace_is_named_as_such(exe, tmp_path):
    # Both used to say "wrong magic" (the directory) or wait (the FIFO).
    import os
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path, needle in [(tmp_path, "is a directory"), (fifo, "not a regular file")]:
        r = subprocess.run([exe, "trace", "info", str(path)], capture_output=True, text=True, timeout=20)
        assert r.returncode != 0 and needle in r.stderr and str(path) in r.stderr, r.stderr


def test_a_sweep_removes_its_own_and_dead_sweeps_temporary_directories(exe, tmp_path):
    # A killed sweep left /tmp/indexsim-sweep-PID behind for good; the next sweep now removes the
    # directories of sweeps whose process is gone, and its own on every way out.
    import os
    import tempfile
    tmp = tempfile.gettempdir()
    stale = os.path.join(tmp, "indexsim-sweep-4194999")   # beyond Linux's pid_max: no such process
    os.makedirs(stale, exist_ok=True)
    open(os.path.join(stale, "x.err"), "w").write("old")
    live = os.path.join(tmp, f"indexsim-sweep-{os.getpid()}")   # a live process's: kept
    os.makedirs(live, exist_ok=True)
    try:
        spec = os.path.join(os.path.dirname(__file__), "..", "..", "configs", "sweeps", "smoke.yaml")
        r = subprocess.run([exe, "sweep", spec, "--db", str(tmp_path / "s.sqlite"), "--limit", "1", "--workers", "1", "--quiet"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-400:]
        assert not os.path.exists(stale)
        assert os.path.isdir(live)
        leftovers = [d for d in os.listdir(tmp) if d.startswith("indexsim-sweep-") and d != os.path.basename(live)]
        assert not any(os.path.exists(os.path.join(tmp, d, "x.err")) for d in leftovers)
    finally:
        os.rmdir(live)


def _alias_bomb(levels=7):
    # ten lists of ten aliases per level: 10^levels nodes from a few hundred bytes
    lines = ["description:", '  a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    for i in range(1, levels + 1):
        lines.append(f"  a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


def test_an_alias_inside_the_node_it_names_is_refused_not_a_stack_overflow(exe, tmp_path):
    # Found by fuzz_config: `&b {x: 1, <: *b}` is a cycle, and every walk of it overflowed the stack (SIGSEGV).
    path = tmp_path / "cycle.yaml"
    path.write_text("base: &b {x: 1, <: *b}\n")
    r = subprocess.run([exe, "run", "--hardware", str(path), "--workload", "glm-5", "--context", "1024", "--fast"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "alias inside the node it names" in r.stderr and str(path) in r.stderr, r.stderr[-400:]


@pytest.mark.parametrize("where", ["hardware", "sweep"])
def test_an_alias_bomb_is_refused_before_anything_walks_it(exe, tmp_path, where):
    # Before: 7 levels took 43 s and 780 MB, 8 levels over a minute, in a hardware file or a sweep spec.
    if where == "hardware":
        path = tmp_path / "bomb.yaml"
        path.write_text("base: h200\n" + _alias_bomb())
        args = ["run", "--hardware", str(path), "--workload", "glm-5", "--context", "1024", "--fast"]
    else:
        path = tmp_path / "bomb-sweep.yaml"
        path.write_text("name: bomb\nbase: {hardware: h200, workload: glm-5, fast: true}\naxes: {hardware: [h200]}\n"
                        + _alias_bomb())
        args = ["sweep", str(path), "--db", str(tmp_path / "b.sqlite"), "--dry-run"]
    r = subprocess.run([exe, *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "alias bomb" in r.stderr and str(path) in r.stderr, r.stderr[-400:]


def _kernel_block_patched(src, dst, patch):
    """Copies trace `src` to `dst` with its first kernel block's payload changed by patch(payload,
    offset of grid[0]) and the block's CRC recomputed (traces/FORMAT.md): a CRC-valid bad trace."""
    import struct
    import zlib
    b = src.read_bytes()
    j = struct.unpack_from("<I", b, 12)[0]
    pos, out, done = 20 + j, bytearray(b[:20 + j]), False
    while pos + 9 <= len(b):
        t, n = b[pos], struct.unpack_from("<I", b, pos + 1)[0]
        payload = bytearray(b[pos + 9:pos + 9 + n])
        if t == 2 and not done:
            o = 4
            o += 4 + struct.unpack_from("<I", payload, o)[0]   # name
            o += 4 + struct.unpack_from("<I", payload, o)[0]   # kind
            patch(payload, o + 8)                              # after layer and stream
            done = True
        out += bytes([t]) + struct.pack("<II", len(payload), zlib.crc32(payload)) + payload
        pos += 9 + n
    dst.write_bytes(bytes(out))


@pytest.mark.parametrize("name, patch, needle", [
    ("huge_grid", lambda p, o: p.__setitem__(slice(o, o + 12), b"\xff" * 12), "2^32 CTAs"),
    ("empty_grid", lambda p, o: p.__setitem__(slice(o, o + 4), b"\x00" * 4), "at least 1"),
    ("huge_block", lambda p, o: p.__setitem__(slice(o + 12, o + 24), b"\xff" * 12), "65536 threads"),
])
def test_a_crc_valid_trace_declaring_an_impossible_launch_is_refused_at_once(exe, tmp_path, name, patch, needle):
    # Before: (2^32-1)^3 CTAs kept `run` warming for ever; 0 threads per CTA ran to completion.
    src = tmp_path / "tiny.itr"
    gen = subprocess.run([exe, "trace", "gen", "--workload",
                          os.path.join(os.path.dirname(__file__), "..", "data", "workloads", "tiny-dsa.yaml"),
                          "--context", "64", "-o", str(src)], capture_output=True, text=True, timeout=60)
    assert gen.returncode == 0, gen.stderr
    bad = tmp_path / f"{name}.itr"
    _kernel_block_patched(src, bad, patch)
    r = subprocess.run([exe, "run", "--hardware", "h200", "--trace", str(bad), "--fast"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and needle in r.stderr and str(bad) in r.stderr, r.stderr[-400:]


def test_an_output_path_that_is_not_a_regular_file_is_refused_and_left_alone(exe, tmp_path):
    # Outputs are written to PATH.tmp and renamed over PATH: over a FIFO or a device (/dev/full),
    # the rename would have replaced it with a regular file.
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    trace = tmp_path / "t.itr"
    gen = subprocess.run([exe, "trace", "gen", "--workload",
                          os.path.join(os.path.dirname(__file__), "..", "data", "workloads", "tiny-dsa.yaml"),
                          "--context", "64", "-o", str(trace)], capture_output=True, text=True, timeout=60)
    assert gen.returncode == 0, gen.stderr
    for args in (["run", "--hardware", "h200", "--trace", str(trace), "--fast", "--timeline", str(fifo)],
                 ["trace", "export", str(trace), "--format", "dramsim3", "-o", str(fifo)],
                 ["trace", "gen", "--workload", "glm-5", "--context", "64", "-o", str(fifo)]):
        r = subprocess.run([exe, *args], capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and "not a regular file" in r.stderr and str(fifo) in r.stderr, (args, r.stderr[-300:])
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert not list(tmp_path.glob("*.tmp"))


def test_text_that_is_not_utf8_is_refused_where_it_enters(exe, tmp_path):
    # Before: nlohmann's "[json.exception.type_error.316] invalid UTF-8 byte", naming no file or key.
    hw = tmp_path / "latin1.yaml"
    hw.write_bytes(b"base: h200\nname: \"\xe9t\xe9\"\n")
    for args, needle in ([["run", "--hardware", str(hw), "--workload", "glm-5", "--context", "1024", "--fast"], str(hw)],
                         [["run", "--hardware", "h200", "--workload", "glm-5", "--context", "1024", "--fast",
                           "--set", "workload.name=\udcff"], "glm-5.yaml"]):
        r = subprocess.run([exe, *args], capture_output=True, text=True, timeout=60, errors="surrogateescape")
        assert r.returncode == 2 and "not valid UTF-8" in r.stderr and needle in r.stderr, r.stderr[-300:]
    # A kernel name in a trace: a trace error naming the block.
    src = tmp_path / "tiny.itr"
    gen = subprocess.run([exe, "trace", "gen", "--workload",
                          os.path.join(os.path.dirname(__file__), "..", "data", "workloads", "tiny-dsa.yaml"),
                          "--context", "64", "-o", str(src)], capture_output=True, text=True, timeout=60)
    assert gen.returncode == 0, gen.stderr
    bad = tmp_path / "latin1.itr"
    _kernel_block_patched(src, bad, lambda p, o: p.__setitem__(8, 0xFF))  # the name's first byte
    r = subprocess.run([exe, "trace", "check", str(bad)], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "not valid UTF-8" in r.stderr and str(bad) in r.stderr, r.stderr[-300:]


# --- The bad-input matrix by area: traces, configs, command-line arguments, memory traces, databases.
# Every case fails during argument, config or input checking (no simulation runs), exits 1, 2 or 3
# (never 0, never a signal) and names the offending input on stderr.

REPO = Path(__file__).resolve().parents[2]
TINY_WORKLOAD = str(REPO / "tests" / "data" / "workloads" / "tiny-dsa.yaml")


def _call(exe, args, timeout=30, python=False):
    cmd = [sys.executable, "-m", "indexsim", *args] if python else [exe, *args]
    env = dict(os.environ)
    if python:   # the source tree's package: report and export live in Python
        env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO / "analysis"), env.get("PYTHONPATH", "")] if p)
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout, env=env)


def _refused(r, needles):
    """A refusal: status 1, 2 or 3 (not 0, not a signal), and stderr naming every needle."""
    assert r.returncode in (1, 2, 3), (r.returncode, r.stderr[-400:])
    for n in needles:
        assert n in r.stderr, (n, r.stderr[-400:])


@pytest.fixture(scope="module")
def tiny_trace(exe, tmp_path_factory):
    path = tmp_path_factory.mktemp("itr") / "tiny.itr"
    r = _call(exe, ["trace", "gen", "--workload", TINY_WORKLOAD, "--context", "64", "-o", str(path)], timeout=60)
    assert r.returncode == 0, r.stderr
    return path


def _block0(b):
    """Byte offset of the first block after the header (traces/FORMAT.md)."""
    import struct
    return 20 + struct.unpack_from("<I", b, 12)[0]


def _flip(b, at):
    b = bytearray(b)
    b[at] ^= 0xFF
    return bytes(b)


def _version(b, v):
    import struct
    return b[:8] + struct.pack("<I", v) + b[12:]


def _unknown_block(b):
    import struct
    import zlib
    return b + bytes([9]) + struct.pack("<II", 0, zlib.crc32(b""))


_TRACE_BYTES = {   # name: the good trace's bytes -> the bad trace's (None: a directory, "missing": no file)
    "empty": lambda b: b"",
    "wrong_magic": lambda b: b"XDXTRACE" + b[8:],
    "short_header": lambda b: b[:10],
    "header_crc": lambda b: _flip(b, 17),
    "newer_version": lambda b: _version(b, 99),
    "truncated_payload": lambda b: b[:-7],
    "payload_crc": lambda b: _flip(b, _block0(b) + 11),
    "partial_block_header": lambda b: b + b"\x01\x02",
    "unknown_block_type": _unknown_block,
    "directory": None,
    "missing": "missing",
}


@pytest.mark.parametrize("kind, command, needle", [
    ("empty", ["trace", "check"], "truncated header: file has 0 bytes"),
    ("empty", ["trace", "info"], "truncated header"),
    ("empty", ["run", "--hardware", "h200", "--fast", "--trace"], "truncated header"),
    ("wrong_magic", ["trace", "check"], "wrong magic"),
    ("wrong_magic", ["trace", "dump"], "wrong magic"),
    ("wrong_magic", ["validate", "--hardware", "h200", "--trace"], "wrong magic"),
    ("short_header", ["trace", "info"], "truncated header: file has 10 bytes"),
    ("header_crc", ["trace", "check"], "header CRC mismatch"),
    ("header_crc", ["run", "--hardware", "h200", "--fast", "--trace"], "header CRC mismatch"),
    ("newer_version", ["trace", "info"], "version 99 is newer"),
    ("truncated_payload", ["trace", "check"], "truncated block"),
    ("truncated_payload", ["run", "--hardware", "h200", "--fast", "--trace"], "truncated block"),
    ("payload_crc", ["trace", "check"], "block 0 at byte offset"),
    ("payload_crc", ["run", "--hardware", "h200", "--fast", "--trace"], "payload CRC mismatch"),
    ("payload_crc", ["validate", "--hardware", "h200", "--fast", "--trace"], "payload CRC mismatch"),
    ("payload_crc", ["trace", "dump"], "payload CRC mismatch"),
    ("partial_block_header", ["trace", "check"], "truncated block header"),
    ("unknown_block_type", ["trace", "check"], "unknown block type 9"),
    ("directory", ["trace", "check"], "is a directory"),
    ("directory", ["run", "--hardware", "h200", "--fast", "--trace"], "is a directory"),
    ("missing", ["trace", "info"], "cannot open"),
    ("missing", ["run", "--hardware", "h200", "--fast", "--trace"], "cannot open"),
])
def test_a_bad_trace_file_is_a_trace_error_naming_the_file(exe, tmp_path, tiny_trace, kind, command, needle):
    """Traces (.itr): empty, truncated, wrong magic, newer version, CRC-broken, a directory, missing."""
    make = _TRACE_BYTES[kind]
    bad = tmp_path / f"{kind}.itr"
    if make is None:
        bad.mkdir()
    elif make != "missing":
        bad.write_bytes(make(tiny_trace.read_bytes()))
    r = _call(exe, [*command, str(bad)])
    _refused(r, [str(bad), needle])


@pytest.mark.parametrize("kind", ["payload_crc", "wrong_magic"])
def test_trace_export_of_a_bad_trace_writes_nothing(exe, tmp_path, tiny_trace, kind):
    """Traces: `trace export` of a broken trace fails naming it and leaves no output behind."""
    bad = tmp_path / f"{kind}.itr"
    bad.write_bytes(_TRACE_BYTES[kind](tiny_trace.read_bytes()))
    out = tmp_path / "out.txt"
    r = _call(exe, ["trace", "export", str(bad), "--format", "dramsim3", "-o", str(out)])
    _refused(r, [str(bad)])
    assert not out.exists() and not list(tmp_path.glob("*.tmp"))


H200 = "configs/hardware/h200.yaml"   # as named in the message (relative to the configs it found)
GLM5 = "configs/workloads/glm-5.yaml"
BASELINE = "configs/techniques/baseline.yaml"
INDEXPOOL = "configs/techniques/indexpool.yaml"


@pytest.mark.parametrize("assignment, needles", [
    # unknown keys, in each section
    ("hardware.l2.nosuch=1", ["l2.nosuch", "unknown key", H200]),
    ("hardware.gpu.sms=0", ["gpu.sms", "unknown key", H200]),
    ("workload.nosuch=1", ["nosuch", "unknown key", GLM5]),
    ("techniques.nosuch=1", ["nosuch", "unknown key", BASELINE]),
    ("step.nosuch=1", ["step.nosuch", "unknown step parameter"]),
    ("nosuch.key=1", ["nosuch.key=1", "must start with hardware."]),
    ("hardware.l2.ways", ["l2.ways", "needs path=value"]),
    ("hardware.l2.ways=", ["l2.ways", "required key is missing"]),
    # wrong types
    ("hardware.l2.ways=abc", ["l2.ways", "'abc'", "must be a number", H200]),
    ("hardware.l2.ways=16abc", ["l2.ways", "'16abc'", "must be a number"]),
    ("hardware.l2.ways=1.5", ["l2.ways", "'1.5'", "must be an integer"]),
    ("hardware.l2.ways=[1,2]", ["l2.ways", "must be a scalar"]),
    ("hardware.l2.ways=true", ["l2.ways", "'true'", "must be a number"]),
    ("hardware.gpu.warpgroup_mma=maybe", ["gpu.warpgroup_mma", "'maybe'", "true or false"]),
    ("hardware.l2.replacement=random", ["l2.replacement", "'random'", "must be one of"]),
    ("hardware.l2.impl=nosuch", ["l2.impl", "'nosuch'", "must be one of"]),
    ("workload.model.num_layers=abc", ["model.num_layers", "'abc'", GLM5]),
    ("step.seed=abc", ["step.seed", "'abc'"]),
    ("step.phase=sideways", ["step.phase", "'sideways'"]),
    # negative, zero and out of range
    ("hardware.l2.ways=-4", ["l2.ways", "'-4'", ">= 0"]),
    ("hardware.l2.ways=0", ["l2.ways", "'0'", "> 0"]),
    ("hardware.l2.capacity_MiB=-1", ["l2.capacity_MiB", "'-1'", "> 0"]),
    ("hardware.l2.capacity_MiB=0", ["l2.capacity_MiB", "'0'", "> 0"]),
    ("hardware.l2.clock_MHz=-1980", ["l2.clock_MHz", "'-1980'", "in [1, 100000]"]),
    ("hardware.gpu.sm_count=0", ["gpu.sm_count", "'0'", "must be in [1, 4096]"]),
    ("hardware.gpu.sm_count=-1", ["gpu.sm_count", "'-1'"]),
    ("hardware.gpu.mma_issue_efficiency=1.5", ["gpu.mma_issue_efficiency", "'1.5'", "must be in [0.05, 1]"]),
    ("hardware.gpu.mma_issue_efficiency=-0.1", ["gpu.mma_issue_efficiency", "'-0.1'"]),
    ("workload.model.num_layers=0", ["model.num_layers", "'0'", "must be in [1, 1024]"]),
    ("workload.model.num_layers=-3", ["model.num_layers", "'-3'"]),
    ("techniques.index_pool.ratio=0", ["index_pool.ratio", "'0'", "must be in [2, 4]", BASELINE]),
    ("step.context=-1", ["step.context", "'-1'"]),
    ("step.batch=-1", ["step.batch", "'-1'"]),
    ("step.batch=0", ["batch", "0", ">= 1"]),
    # nan, inf and a double that overflows
    ("hardware.l2.ways=nan", ["l2.ways", "'nan'"]),
    ("hardware.l2.ways=inf", ["l2.ways", "'inf'"]),
    ("hardware.l2.capacity_MiB=nan", ["l2.capacity_MiB", "'nan'", "must be a number"]),
    ("hardware.l2.capacity_MiB=inf", ["l2.capacity_MiB", "'inf'", "must be a number"]),
    ("hardware.l2.clock_MHz=nan", ["l2.clock_MHz", "'nan'"]),
    ("hardware.gpu.sm_clock_MHz=-inf", ["gpu.sm_clock_MHz", "'-inf'"]),
    ("hardware.gpu.sm_clock_MHz=1e400", ["gpu.sm_clock_MHz", "'1e400'"]),
    ("hardware.gpu.mma_issue_efficiency=nan", ["gpu.mma_issue_efficiency", "'nan'"]),
    ("workload.model.hidden_size=nan", ["model.hidden_size", "'nan'", GLM5]),
    ("step.context=nan", ["step.context", "'nan'"]),
    ("step.queries=inf", ["step.queries", "'inf'"]),
])
def test_a_bad_set_assignment_is_a_config_error_naming_the_key(exe, assignment, needles):
    """Configs: --set with an unknown key, a wrong type, an out-of-range, negative, nan or inf value."""
    r = _call(exe, [*RUN, "--set", assignment])
    assert r.returncode == 2, (r.returncode, r.stderr[-400:])
    _refused(r, needles)


@pytest.mark.parametrize("assignment, needles", [
    ("techniques.index_pool.ratio=-4", ["index_pool.ratio", "'-4'", INDEXPOOL]),
    ("techniques.index_pool.ratio=nan", ["index_pool.ratio", "'nan'", INDEXPOOL]),
    ("techniques.index_pool.gate=nosuch", ["index_pool.gate", "'nosuch'", "must be one of", INDEXPOOL]),
])
def test_a_bad_technique_setting_names_the_techniques_file(exe, assignment, needles):
    """Configs: --set on a technique preset's own section."""
    r = _call(exe, [*RUN, "--techniques", "indexpool", "--set", assignment])
    assert r.returncode == 2, (r.returncode, r.stderr[-400:])
    _refused(r, needles)


_BAD_YAML = {
    "syntax.yaml": "base: h200\nname: x\nl2: {ways: 16\n",
    "tab.yaml": "base: h200\n\tname: x\n",
    "list.yaml": "- 1\n- 2\n",
    "empty.yaml": "",
    "badbase.yaml": "base: nosuchbase\nname: x\n",
    "garbage.seg": "not segment memos\n",
}


@pytest.mark.parametrize("args, needles", [
    # a missing preset name
    (["run", "--hardware", "nosuchpreset", "--workload", "glm-5", "--context", "1024", "--fast"], ["'nosuchpreset' not found"]),
    (["run", "--hardware", "h200", "--workload", "nosuchworkload", "--context", "1024", "--fast"], ["'nosuchworkload' not found"]),
    (["run", *RUN[1:], "--techniques", "nosuchtech"], ["'nosuchtech' not found"]),
    (["bench", "memory", "--hardware", "nosuchpreset", "--pattern", "stream", "--requests", "10"], ["'nosuchpreset' not found"]),
    (["trace", "gen", "--workload", "glm-5", "--hardware", "nosuchpreset", "--context", "64", "-o", "{tmp}/g.itr"], ["'nosuchpreset' not found"]),
    (["study", "nosuchstudy", "--db", "{tmp}/s.sqlite"], ["'nosuchstudy' not found"]),
    (["validate", "--trace", "{trace}", "--hardware", "nosuchpreset"], ["'nosuchpreset' not found"]),
    # a missing file path
    (["run", "--hardware", "{tmp}/missing.yaml", "--workload", "glm-5", "--context", "1024", "--fast"], ["{tmp}/missing.yaml", "not found"]),
    (["run", "--hardware", "h200", "--workload", "{tmp}/missing.yaml", "--context", "1024", "--fast"], ["{tmp}/missing.yaml", "not found"]),
    (["run", *RUN[1:], "--techniques", "{tmp}/missing.yaml"], ["{tmp}/missing.yaml", "not found"]),
    (["sweep", "{tmp}/missing.yaml", "--db", "{tmp}/s.sqlite", "--dry-run"], ["{tmp}/missing.yaml", "cannot open"]),
    (["validate", "--published", "{tmp}/missing.yaml"], ["{tmp}/missing.yaml", "not found"]),
    # a YAML syntax error, a top level that is not a mapping, an empty file, a base that does not exist
    (["run", "--hardware", "{tmp}/syntax.yaml", "--workload", "glm-5", "--context", "1024", "--fast"], ["{tmp}/syntax.yaml", "YAML syntax error"]),
    (["run", "--hardware", "h200", "--workload", "{tmp}/syntax.yaml", "--context", "1024", "--fast"], ["{tmp}/syntax.yaml", "YAML syntax error"]),
    (["run", *RUN[1:], "--techniques", "{tmp}/syntax.yaml"], ["{tmp}/syntax.yaml", "YAML syntax error"]),
    (["run", "--hardware", "{tmp}/tab.yaml", "--workload", "glm-5", "--context", "1024", "--fast"], ["{tmp}/tab.yaml", "illegal tab"]),
    (["run", "--hardware", "{tmp}/list.yaml", "--workload", "glm-5", "--context", "1024", "--fast"], ["{tmp}/list.yaml", "must be a mapping"]),
    (["run", "--hardware", "{tmp}/empty.yaml", "--workload", "glm-5", "--context", "1024", "--fast"], ["{tmp}/empty.yaml", "must be a mapping"]),
    (["run", "--hardware", "{tmp}/badbase.yaml", "--workload", "glm-5", "--context", "1024", "--fast"], ["{tmp}/badbase.yaml", "'nosuchbase' not found"]),
    (["study", "{tmp}/syntax.yaml", "--db", "{tmp}/s.sqlite"], ["{tmp}/syntax.yaml", "YAML syntax error"]),
    (["sweep", "{tmp}/syntax.yaml", "--db", "{tmp}/s.sqlite", "--dry-run"], ["{tmp}/syntax.yaml", "YAML syntax error"]),
    (["validate", "--published", "{tmp}/syntax.yaml"], ["{tmp}/syntax.yaml", "YAML syntax error"]),
    (["trace", "gen", "--workload", "{tmp}/syntax.yaml", "--context", "64", "-o", "{tmp}/g.itr"], ["{tmp}/syntax.yaml", "YAML syntax error"]),
    (["bench", "memory", "--hardware", "{tmp}/syntax.yaml", "--pattern", "stream", "--requests", "10"], ["{tmp}/syntax.yaml", "YAML syntax error"]),
    # --set where the command takes none of that section, and bad keys through the other commands
    (["bench", "memory", "--hardware", "h200", "--pattern", "stream", "--requests", "10", "--set", "workload.x=1"], ["workload.x=1"]),
    (["bench", "memory", "--hardware", "h200", "--pattern", "stream", "--requests", "10", "--set", "hardware.nosuch=1"], ["nosuch", "unknown key"]),
    (["bench", "kernel", "--hardware", "h200", "gemm", "--m", "64", "--n", "64", "--k", "64", "--set", "hardware.l2.ways=nan"], ["l2.ways", "'nan'"]),
    (["bench", "collective", "--hardware", "h200", "--op", "all_reduce", "--gpus", "8", "--bytes", "1M", "--set", "collectives.algorithm=zigzag"], ["collectives.algorithm=zigzag"]),
    (["bench", "collective", "--hardware", "h200", "--op", "all_reduce", "--gpus", "8", "--bytes", "1M", "--set", "hardware.collectives.nccl_bandwidth_share.tree=[0.2,0,0.9]"],
     ["collectives.nccl_bandwidth_share.tree", "(0, 1]"]),
    (["bench", "collective", "--hardware", "h200", "--op", "all_reduce", "--gpus", "8", "--bytes", "1M", "--set", "hardware.collectives.nvls.channels=0"],
     ["collectives.nvls.channels", "0"]),
    (["trace", "gen", "--workload", "glm-5", "--context", "64", "-o", "{tmp}/g.itr", "--set", "workload.nosuch=1"], ["nosuch", "unknown key"]),
    (["validate", "--trace", "{trace}", "--hardware", "h200", "--set", "hardware.nosuch=1"], ["nosuch", "unknown key"]),
    (["validate", "--published", "--case", "nosuchcase"], ["nosuchcase"]),
    (["validate", "--published", "--group", "nosuchgroup"], ["nosuchgroup"]),
    (["validate", "--published", "--jobs", "0"], ["--jobs 0", "between 1 and 256"]),
    # segment memo files (run --segments-from / --segments-to), refused before the run
    (["run", "--hardware", "h200", "--workload", "glm-5", "--context", "1024", "--fast", "--segments-from", "{tmp}/none.seg"],
     ["{tmp}/none.seg", "cannot be opened"]),
    (["run", "--hardware", "h200", "--workload", "glm-5", "--context", "1024", "--fast", "--segments-from", "{tmp}/garbage.seg"],
     ["{tmp}/garbage.seg", "not a segment file"]),
    (["run", "--hardware", "h200", "--workload", "glm-5", "--context", "1024", "--fast", "--segments-to", "{tmp}/no/dir.seg"],
     ["{tmp}/no/dir.seg", "cannot write there"]),
])
def test_a_missing_or_malformed_config_is_named(exe, tmp_path, tiny_trace, args, needles):
    """Configs: a missing preset name or file path, a YAML syntax error in a file passed by path."""
    for name, text in _BAD_YAML.items():
        (tmp_path / name).write_text(text)
    fill = lambda s: s.replace("{tmp}", str(tmp_path)).replace("{trace}", str(tiny_trace))
    r = _call(exe, [fill(a) for a in args])
    assert r.returncode == 2, (r.returncode, r.stderr[-400:])
    _refused(r, [fill(n) for n in needles])
    assert not (tmp_path / "g.itr").exists() and not (tmp_path / "s.sqlite").exists()


RUN_NO_CONTEXT = ["run", "--hardware", "h200", "--workload", "glm-5", "--fast"]
BENCH_MEMORY = ["bench", "memory", "--hardware", "h200", "--pattern", "stream"]
BENCH_KERNEL = ["bench", "kernel", "--hardware", "h200"]
BENCH_COLLECTIVE = ["bench", "collective", "--hardware", "h200", "--op", "all_reduce", "--gpus", "8"]
DISPATCH = ["bench", "collective", "--hardware", "h200", "--op", "dispatch", "--gpus", "8", "--tokens", "128",
            "--hidden", "7168", "--topk", "8", "--experts", "256"]
TRACE_GEN = ["trace", "gen", "--workload", "glm-5", "-o", "{tmp}/g.itr"]
SWEEP = ["sweep", "{tmp}/spec.yaml", "--db", "{tmp}/s.sqlite", "--dry-run"]
EXPORT = ["trace", "export", "{trace}", "--format", "dramsim3", "-o", "{tmp}/e.txt"]


@pytest.mark.parametrize("args, needles", [
    # run: every numeric flag
    ([*RUN_NO_CONTEXT, "--context", "abc"], ["--context", "'abc'"]),
    ([*RUN_NO_CONTEXT, "--context", "-1"], ["--context", "'-1'"]),
    ([*RUN_NO_CONTEXT, "--context", "1e30"], ["--context", "'1e30'"]),
    ([*RUN_NO_CONTEXT, "--context", "1.5"], ["--context", "'1.5'"]),
    ([*RUN_NO_CONTEXT, "--context", "4294967297"], ["context", "4294967297"]),
    ([*RUN_NO_CONTEXT, "--context", "0"], ["context = 0"]),
    ([*RUN, "--batch", "abc"], ["--batch", "'abc'"]),
    ([*RUN, "--batch", "-1"], ["--batch", "'-1'"]),
    ([*RUN, "--queries", "inf"], ["--queries", "'inf'"]),
    ([*RUN, "--chunk", "1.5"], ["--chunk", "'1.5'"]),
    # an empty value is a bad value, not "not given" (it used to run with the default)
    ([*RUN_NO_CONTEXT, "--context", ""], ["--context", "''"]),
    ([*RUN, "--batch", ""], ["--batch", "''"]),
    ([*RUN, "--steps", ""], ["--steps", "''"]),
    (["study", "default", "--db", "{tmp}/s.sqlite", "extra"], ["'extra'"]),   # used to run the whole study
    # the work budget: a run asking for more line requests than it allows is refused before it starts
    ([*RUN, "--max-line-requests", "1000"], ["work budget", "--max-line-requests 1e+03"]),
    ([*RUN, "--max-line-requests", "-1"], ["--max-line-requests", "'-1'"]),
    # were accepted: no thread, a share of the time to first token above 100 %, no request
    ([*RUN, "--jobs", "0"], ["--jobs 0", "between 1 and 256"]),
    ([*RUN, "--refine-percent", "1e30"], ["--refine-percent", "at most 100"]),
    (["bench", "memory", "--hardware", "h200", "--pattern", "stream", "--requests", "0"], ["--requests = 0"]),
    # an option given twice was called "unknown"
    ([*RUN, "--context", "2048"], ["--context is given more than once"]),
    ([*RUN, "--fast"], ["--fast is given more than once"]),
    # sizes were cast before their range was checked (nan named 9223372036854775808, 1e30 named 0)
    (["bench", "collective", "--hardware", "h200", "--op", "all_reduce", "--gpus", "8", "--bytes", "nan"], ["--bytes 'nan'"]),
    (["bench", "collective", "--hardware", "h200", "--op", "all_reduce", "--gpus", "8", "--bytes", "inf"], ["--bytes 'inf'"]),
    (["bench", "collective", "--hardware", "h200", "--op", "all_reduce", "--gpus", "8", "--bytes", "1e30"], ["--bytes '1e30'", "too large"]),
    (["bench", "collective", "--hardware", "h200", "--op", "all_reduce", "--gpus", "8", "--bytes", "1.5"], ["--bytes '1.5'", "whole"]),
    (["bench", "collective", "--hardware", "h200", "--op", "all_reduce", "--gpus", "8", "--max-bytes", "inf"], ["--max-bytes 'inf'"]),
    ([*RUN, "--sampled-chunks", "abc"], ["--sampled-chunks", "'abc'"]),
    ([*RUN, "--sampled-chunks", "-2"], ["--sampled-chunks", "'-2'"]),
    ([*RUN, "--refine-percent", "nan"], ["--refine-percent", "'nan'"]),
    ([*RUN, "--refine-percent", "-1"], ["--refine-percent", "'-1'"]),
    ([*RUN, "--refine-percent", "inf"], ["--refine-percent", "'inf'"]),
    ([*RUN, "--max-simulated-chunks", "inf"], ["--max-simulated-chunks", "'inf'"]),
    ([*RUN, "--max-simulated-chunks", "-1"], ["--max-simulated-chunks", "'-1'"]),
    ([*RUN, "--jobs", "-1"], ["--jobs", "'-1'"]),
    ([*RUN, "--jobs", "abc"], ["--jobs", "'abc'"]),
    ([*RUN, "--seed", "abc"], ["--seed", "'abc'"]),
    ([*RUN, "--seed", "1e30"], ["--seed", "'1e30'"]),
    ([*RUN, "--steps", "-1"], ["--steps", "'-1'"]),
    ([*RUN, "--steps", "0"], ["--steps", "between 1 and 1000"]),
    ([*RUN, "--steps", "1001"], ["--steps", "between 1 and 1000"]),
    ([*RUN, "--phase", "sideways"], ["--phase", "'sideways'"]),
    ([*RUN, "--engine", "gem5"], ["--engine", "'gem5'"]),
    ([*RUN, "--engine", "systemc", "--phase", "prefill", "--jobs", "2"], ["--engine systemc", "--jobs 2"]),
    # An external TLM-2.0 region: only a program that links the library can bind its target.
    ([*RUN, "--set", EXTERNAL_SRAM], ["memory.sram.impl", "'tlm_target'", "SystemC engine"]),
    ([*RUN, "--engine", "systemc", "--set", EXTERNAL_SRAM], ["'sram'", "no target bound"]),
    ([*RUN, "--engine", "systemc", "--set", EXTERNAL_SRAM.replace("loosely_timed", "sloppy")],
     ["memory.sram.coding_style", "'sloppy'"]),
    ([*RUN, "--nosuch"], ["'--nosuch'"]),
    ([*RUN, "stray"], ["'stray'"]),
    ([*RUN_NO_CONTEXT, "--context"], ["--context needs a value"]),
    ([*RUN, "--db"], ["--db needs a value"]),
    ([*RUN, "--set"], ["--set needs a value"]),
    ([*RUN, "--timeline"], ["--timeline needs a value"]),
    (["run", "--workload", "glm-5"], ["--hardware is required"]),
    ([*RUN, "--trace", "{trace}"], ["--workload", "--trace"]),
    # bench memory
    ([*BENCH_MEMORY, "--requests", "abc"], ["--requests", "'abc'"]),
    ([*BENCH_MEMORY, "--requests", "-1"], ["--requests", "'-1'"]),
    ([*BENCH_MEMORY, "--requests", "10", "--requesters", "-1"], ["--requesters", "'-1'"]),
    ([*BENCH_MEMORY, "--requests", "10", "--requesters", "0"], ["requesters", "> 0"]),
    ([*BENCH_MEMORY, "--requests", "10", "--outstanding", "nan"], ["--outstanding", "'nan'"]),
    ([*BENCH_MEMORY, "--requests", "10", "--outstanding", "0"], ["outstanding", "> 0"]),
    ([*BENCH_MEMORY, "--requests", "10", "--bytes", "abc"], ["--bytes", "'abc'"]),
    ([*BENCH_MEMORY, "--requests", "10", "--bytes", "0"], ["bytes", "> 0"]),
    ([*BENCH_MEMORY, "--requests", "10", "--footprint-MiB", "inf"], ["--footprint-MiB", "'inf'"]),
    ([*BENCH_MEMORY, "--requests", "10", "--write-fraction", "nan"], ["--write-fraction", "'nan'"]),
    ([*BENCH_MEMORY, "--requests", "10", "--write-fraction", "-1"], ["--write-fraction", "'-1'"]),
    ([*BENCH_MEMORY, "--requests", "10", "--seed", "-1"], ["--seed", "'-1'"]),
    ([*BENCH_MEMORY, "--requests", "10", "--target", "nosuch"], ["'nosuch'"]),
    (["bench", "memory", "--hardware", "h200", "--pattern", "zigzag", "--requests", "10"], ["--pattern", "'zigzag'"]),
    ([*BENCH_MEMORY, "--requests", "10", "--nosuch"], ["'--nosuch'"]),
    ([*BENCH_MEMORY, "--requests"], ["--requests needs a value"]),
    (["bench", "nosuch"], ["'nosuch'"]),
    # bench kernel (shape keys are numeric flags too)
    ([*BENCH_KERNEL, "gemm", "--m", "abc", "--n", "64", "--k", "64"], ["m = 'abc'"]),
    ([*BENCH_KERNEL, "gemm", "--m", "-1", "--n", "64", "--k", "64"], ["m = '-1'"]),
    ([*BENCH_KERNEL, "gemm", "--m", "0", "--n", "64", "--k", "64"], ["m = '0'"]),
    ([*BENCH_KERNEL, "gemm", "--m", "64", "--n", "nan", "--k", "64"], ["n = 'nan'"]),
    ([*BENCH_KERNEL, "gemm", "--m", "64", "--n", "64", "--k", "inf"], ["k = 'inf'"]),
    ([*BENCH_KERNEL, "gemm", "--m", "64", "--n", "64", "--k", "64", "--dtype", "int3"], ["dtype = 'int3'"]),
    ([*BENCH_KERNEL, "gemm", "--m", "64", "--n", "64"], ["k = ''", "required key is missing"]),
    ([*BENCH_KERNEL, "gemm", "--m", "64", "--n", "64", "--k", "64", "--nosuch", "3"], ["nosuch = '3'", "unknown key"]),
    ([*BENCH_KERNEL, "gemm", "--m", "64", "--n", "64", "--k", "64", "--m"], ["--m needs a value"]),
    ([*BENCH_KERNEL, "copy", "--bytes", "-5"], ["bytes = '-5'"]),
    ([*BENCH_KERNEL, "read", "--bytes", "nan"], ["bytes = 'nan'"]),
    ([*BENCH_KERNEL, "mla_decode", "--batch", "1", "--heads", "abc", "--s_q", "1", "--seqlen", "1024"], ["heads = 'abc'"]),
    ([*BENCH_KERNEL, "sparse_mla_decode", "--batch", "1", "--heads", "64", "--s_q", "1", "--topk", "-1", "--context", "4096"], ["topk = '-1'"]),
    ([*BENCH_KERNEL, "all_reduce", "--bytes", "1048576", "--gpus", "0"], ["gpus = '0'"]),
    ([*BENCH_KERNEL, "ep_dispatch", "--tokens", "128", "--hidden", "7168", "--topk", "8", "--experts", "256", "--gpus", "8",
      "--skew", "nan"], ["skew = 'nan'"]),
    ([*BENCH_KERNEL, "nosuchkernel", "--m", "1"], ["'nosuchkernel'"]),
    (BENCH_KERNEL, ["name one kernel"]),
    # bench collective
    ([*BENCH_COLLECTIVE, "--bytes", "abc"], ["--bytes", "'abc'"]),
    ([*BENCH_COLLECTIVE, "--bytes", "-1"], ["--bytes", "'-1'"]),
    ([*BENCH_COLLECTIVE, "--bytes", "0"], ["--bytes", "'0'"]),
    ([*BENCH_COLLECTIVE, "--bytes", "1e400"], ["--bytes", "'1e400'"]),
    ([*BENCH_COLLECTIVE, "--bytes", "1X"], ["--bytes", "'1X'"]),
    ([*BENCH_COLLECTIVE, "--min-bytes", "abc", "--max-bytes", "1M"], ["--min-bytes", "'abc'"]),
    ([*BENCH_COLLECTIVE, "--min-bytes", "1K", "--max-bytes", "-1"], ["--max-bytes", "'-1'"]),
    ([*BENCH_COLLECTIVE, "--min-bytes", "1M", "--max-bytes", "1K"], ["--max-bytes", "--min-bytes"]),
    ([*BENCH_COLLECTIVE, "--min-bytes", "1K", "--max-bytes", "1M", "--factor", "1"], ["--factor", "above 1"]),
    ([*BENCH_COLLECTIVE, "--min-bytes", "1K", "--max-bytes", "1M", "--factor", "nan"], ["--factor", "'nan'"]),
    ([*BENCH_COLLECTIVE, "--min-bytes", "1K", "--max-bytes", "1M", "--factor", "abc"], ["--factor", "'abc'"]),
    ([*BENCH_COLLECTIVE, "--bytes", "1M", "--nosuch"], ["'--nosuch'"]),
    (["bench", "collective", "--hardware", "h200", "--op", "all_reduce", "--gpus", "abc", "--bytes", "1M"], ["gpus = 'abc'"]),
    (["bench", "collective", "--hardware", "h200", "--op", "all_reduce", "--gpus", "0", "--bytes", "1M"], ["gpus = '0'"]),
    (["bench", "collective", "--hardware", "h200", "--op", "all_reduce", "--gpus", "-8", "--bytes", "1M"], ["gpus = '-8'"]),
    (["bench", "collective", "--hardware", "h200", "--op", "all_reduce", "--gpus", "1000000", "--bytes", "1M"], ["gpus = '1000000'"]),
    (["bench", "collective", "--hardware", "h200", "--op", "zigzag", "--gpus", "8", "--bytes", "1M"], ["'zigzag'"]),
    ([*DISPATCH[:9], "abc", *DISPATCH[10:]], ["tokens = 'abc'"]),
    ([*DISPATCH[:11], "-1", *DISPATCH[12:]], ["hidden = '-1'"]),
    ([*DISPATCH[:13], "nan", *DISPATCH[14:]], ["topk = 'nan'"]),
    ([*DISPATCH[:15], "inf"], ["experts = 'inf'"]),
    ([*DISPATCH, "--skew", "-1"], ["skew = '-1'"]),
    # trace gen, trace export, trace dump
    ([*TRACE_GEN, "--context", "abc"], ["--context", "'abc'"]),
    ([*TRACE_GEN, "--context", "-1"], ["--context", "'-1'"]),
    ([*TRACE_GEN, "--context", "64", "--batch", "-1"], ["--batch", "'-1'"]),
    ([*TRACE_GEN, "--context", "64", "--queries", "nan"], ["--queries", "'nan'"]),
    ([*TRACE_GEN, "--context", "64", "--chunk", "abc"], ["--chunk", "'abc'"]),
    ([*TRACE_GEN, "--context", "64", "--seed", "-1"], ["--seed", "'-1'"]),
    ([*TRACE_GEN, "--context", "64", "--phase", "sideways"], ["--phase", "'sideways'"]),
    ([*TRACE_GEN, "--context", "64", "--nosuch"], ["'--nosuch'"]),
    (["trace", "gen", "--workload", "glm-5", "--context", "64"], ["-o FILE"]),
    (["trace", "gen", "--workload", "glm-5", "--context", "64", "-o"], ["-o needs a value"]),
    (["trace", "gen", "--context", "64", "-o", "{tmp}/g.itr"], ["--workload"]),
    (["trace", "gen", "--workload", "glm-5", "--context", "64", "-o", "{tmp}/nodir/g.itr"], ["{tmp}/nodir/g.itr"]),
    (["trace", "nosuch"], ["'nosuch'"]),
    (["trace", "check", "{trace}", "extra"], ["check needs one FILE"]),
    (["trace", "dump", "{trace}", "--limit", "-1"], ["--limit", "'-1'"]),
    ([*EXPORT, "--limit", "abc"], ["--limit", "'abc'"]),
    ([*EXPORT, "--bytes", "-1"], ["--bytes", "'-1'"]),
    ([*EXPORT, "--layer", "x"], ["--layer", "'x'"]),
    ([*EXPORT, "--interval-cycles", "nan"], ["--interval-cycles", "'nan'"]),
    (["trace", "export", "{trace}", "--format", "nosuch", "-o", "{tmp}/e.txt"], ["--format", "'nosuch'"]),
    (["trace", "export", "{trace}", "--format", "ramulator-readwrite", "-o", "{tmp}/e.txt"], ["ramulator-readwrite", "--hardware"]),
    # sweep
    ([*SWEEP, "--workers", "abc"], ["--workers", "'abc'"]),
    ([*SWEEP, "--workers", "-1"], ["--workers", "'-1'"]),
    ([*SWEEP, "--limit", "nan"], ["--limit", "'nan'"]),
    ([*SWEEP, "--limit", "-1"], ["--limit", "'-1'"]),
    ([*SWEEP, "--select", "abc"], ["--select", "'abc'"]),
    ([*SWEEP, "--select", "1,x"], ["--select", "'x'"]),
    ([*SWEEP, "--select", "-1"], ["--select", "'-1'"]),
    ([*SWEEP, "--select", "99"], ["point 99", "{tmp}/spec.yaml"]),
    ([*SWEEP, "--nosuch"], ["'--nosuch'"]),
    (["sweep", "{tmp}/spec.yaml", "extra", "--db", "{tmp}/s.sqlite", "--dry-run"], ["one sweep spec"]),
    (["sweep", "--db", "{tmp}/s.sqlite"], ["one sweep spec"]),
    # study
    (["study", "default", "--db", "{tmp}/s.sqlite", "--nosuch"], ["'--nosuch'"]),
    (["study", "default", "--db"], ["--db needs a value"]),
    # validate
    (["validate", "--published", "--nosuch"], ["'--nosuch'"]),
    (["validate", "--published", "--case"], ["--case needs a value"]),
    (["validate", "--published", "--group"], ["--group needs a value"]),
    (["validate", "--published", "--markdown"], ["--markdown needs a value"]),
    (["validate", "--published", "a.yaml", "b.yaml"], ["'b.yaml'"]),
    (["validate", "--trace", "{trace}"], ["--trace and --hardware are required"]),
    (["validate", "--trace", "{trace}", "--hardware", "h200", "--nosuch"], ["'--nosuch'"]),
    # an emulated trace has no measured times: refused before it is simulated, naming the file (was exit 1)
    (["validate", "--trace", "{trace}", "--hardware", "h200"], ["{trace}", "no kernel of this trace carries a measured time"]),
    # a directory given as a preset (was "not found")
    (["run", "--hardware", "{tmp}", "--workload", "glm-5", "--context", "1024", "--fast"], ["is a directory, not a YAML file"]),
    # merge, and no command at all
    (["merge", "--nosuch"], ["'--nosuch'"]),
    (["merge", "{tmp}/s.sqlite"], ["usage: indexsim merge"]),
    (["nosuchcommand"], ["'nosuchcommand'"]),
])
def test_a_bad_command_line_argument_is_named(exe, tmp_path, tiny_trace, args, needles):
    """Command-line arguments: unknown flags, missing values, bad numbers for each command's numeric flags."""
    (tmp_path / "spec.yaml").write_text("name: s\ndescription: x\nbase: {hardware: h200, workload: glm-5, fast: true}\n"
                                        "axes:\n  step.context: [1024, 2048]\n")
    fill = lambda s: s.replace("{tmp}", str(tmp_path)).replace("{trace}", str(tiny_trace))
    r = _call(exe, [fill(a) for a in args])
    assert r.returncode == 2, (r.returncode, r.stderr[-400:])
    _refused(r, [fill(n) for n in needles])
    assert not (tmp_path / "s.sqlite").exists() and not (tmp_path / "g.itr").exists() and not (tmp_path / "e.txt").exists()


@pytest.mark.parametrize("fmt, text, needles", [
    ("dramsim3", "0x0 READ 0\nzz READ 5\n", [":2:", "address 'zz'"]),
    ("dramsim3", "0x0 READ 0\n0x40 FETCHX 5\n", [":2:", "operation 'FETCHX'"]),
    ("dramsim3", "0x0 READ abc\n", [":1:", "cycle 'abc'"]),
    ("dramsim3", "# only a comment\n", [" holds no request"]),   # an empty trace ran, reporting nothing
    # an address beyond the memory used to fail in the DRAM model, naming neither file nor line
    ("dramsim3", "0x0 READ 0\n0xfffffffffff00000 READ 5\n", [":2:", "0xfffffffffff00000", "beyond the target's capacity"]),
    ("dramsim3", "0x0 READ -1\n", [":1:", "cycle '-1'"]),
    ("dramsim3", "0x0 READ 99999999999999999999999\n", [":1:", "cycle '99999999999999999999999'"]),
    ("dramsim3", "0x0 READ\n", [":1:", "3 fields"]),
    ("dramsim3", "0x1ffffffffffffffffffff READ 0\n", [":1:", "address '0x1ffffffffffffffffffff'"]),
    ("ramulator-loadstore", "LD 0x0\nXX 0x40\n", [":2:", "operation 'XX'"]),
    ("ramulator-loadstore", "LD zz\n", [":1:", "address 'zz'"]),
    ("ramulator-loadstore", "LD -5\n", [":1:", "address '-5'"]),
    ("ramulator-loadstore", "LD 99999999999999999999999\n", [":1:", "address '99999999999999999999999'"]),
    ("ramulator-loadstore", "LD 0x0 5\n", [":1:", "2 fields"]),
    ("ramulator-readwrite", "R 0,0,0,1,0,0,0\nQ 0,0,0,0,0,0,0\n", [":2:", "operation 'Q'"]),
    ("ramulator-readwrite", "R 0,0,0\n", [":1:", "not 3"]),
    ("ramulator-readwrite", "R 0,0,a,1,0,0,0\n", [":1:", "entry 'a'"]),
    ("ramulator-readwrite", "R 0,0,0,1,0,0,-1\n", [":1:", "entry '-1'"]),
    ("ramulator-readwrite", "R 0,0,0,99999,0,0,0\n", [":1:", "bankgroup 99999"]),
    ("ramulator-readwrite", "R\n", [":1:", "2 fields"]),
    ("dramsys", "0:\tread\t0x0\nx:\tread\t0x40\n", [":2:", "time stamp 'x:'"]),
    ("dramsys", "0:\tfetch\t0x0\n", [":1:", "command 'fetch'"]),
    ("dramsys", "0:\tread\tzz\n", [":1:", "address 'zz'"]),
    ("dramsys", "0:\t(0)\tread\t0x0\n", [":1:", "data length '(0)'"]),
    ("dramsys", "0:\t(99999999999)\twrite\t0x0\n", [":1:", "data length '(99999999999)'"]),
    ("dramsys", "0:\tread\t0x0\tjunk\n", [":1:", "unexpected field 'junk'"]),
    ("dramsys", "0:\n", [":1:", "CYCLE:"]),
    ("dramsys", "0:\t(64)\tfetch\t0x0\n", [":1:", "command 'fetch'"]),
    ("dramsys", "0:\t(64)\tread\n", [":1:", "missing address"]),
    ("dramsim3", "\x00\x01binary\n", [":1:", "3 fields"]),
])
def test_a_bad_memory_trace_line_is_named_by_file_and_line(exe, tmp_path, fmt, text, needles):
    """Memory traces (bench memory --trace): a bad line in each --format is a trace error at FILE:LINE."""
    path = tmp_path / f"{fmt}.trace"
    path.write_text(text)
    r = _call(exe, ["bench", "memory", "--hardware", "h200", "--trace", str(path), "--format", fmt])
    assert r.returncode == 2, (r.returncode, r.stderr[-400:])
    _refused(r, [str(path) + needles[0], *needles[1:]])


@pytest.mark.parametrize("fmt", ["dramsim3", "ramulator-loadstore", "ramulator-readwrite", "dramsys"])
@pytest.mark.parametrize("what", ["missing", "directory"])
def test_a_memory_trace_that_cannot_be_read_is_named(exe, tmp_path, fmt, what):
    """Memory traces: a missing file or a directory, in each --format."""
    path = tmp_path / "t.trace"
    if what == "directory":
        path.mkdir()
    r = _call(exe, ["bench", "memory", "--hardware", "h200", "--trace", str(path), "--format", fmt])
    _refused(r, [str(path), "memory trace"])


@pytest.mark.parametrize("extra, needles", [
    (["--format", "nosuch"], ["--format", "'nosuch'"]),
    ([], ["--format"]),
    (["--format", "dramsys", "--pattern", "stream"], ["--pattern", "--trace"]),
    (["--format", "dramsys", "--trace-clock-MHz", "nan"], ["--trace-clock-MHz", "'nan'"]),
    (["--format", "dramsys", "--trace-clock-MHz", "-1"], ["--trace-clock-MHz", "'-1'"]),
    (["--format", "dramsys", "--requesters", "abc"], ["--requesters", "'abc'"]),
])
def test_bench_memory_trace_options_are_checked(exe, tmp_path, extra, needles):
    """Memory traces: the options of bench memory --trace."""
    path = tmp_path / "ok.trace"
    path.write_text("0:\tread\t0x0\n")
    r = _call(exe, ["bench", "memory", "--hardware", "h200", "--trace", str(path), *extra])
    assert r.returncode == 2, (r.returncode, r.stderr[-400:])
    _refused(r, needles)


def _good_db_command(exe, path, seed):
    return subprocess.Popen([exe, *RUN, "--seed", str(seed), "--set", "workload.model.num_layers=2",
                             "--set", "workload.layers=[{first: 0, last: 1, attention: dsa, indexer: full, mlp: dense}]",
                             "--db", str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def good_dbs(exe, tmp_path_factory):
    """Two good results databases with one (different) run each, made at once."""
    d = tmp_path_factory.mktemp("good-db")
    paths = [d / "good.sqlite", d / "other.sqlite"]
    procs = [_good_db_command(exe, p, seed) for p, seed in zip(paths, (1, 2))]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-400:]
    return paths


def _unwritable_dir(tmp_path):
    d = tmp_path / "readonly"
    d.mkdir()
    d.chmod(0o555)
    if not os.access(d, os.W_OK):
        return d
    return Path("/proc")   # root ignores the mode bits; /proc takes no new files, not even root's


def _bad_db(tmp_path, kind):
    path = tmp_path / f"{kind}.sqlite"
    if kind == "dir":
        path.mkdir()
    elif kind == "notdb":
        path.write_bytes(b"not a database at all\n" * 50)
    elif kind == "random":
        path.write_bytes(bytes(random.Random(25).getrandbits(8) for _ in range(4096)))
    elif kind == "truncated":
        path.write_bytes(b"SQLite format 3\x00")
    elif kind == "schema99":
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        con.execute("INSERT INTO meta VALUES ('schema_version', '99')")
        con.commit()
        con.close()
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "foreign":   # another application's SQLite file
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE t (x)")
        con.commit()
        con.close()
    elif kind == "readonly":
        path = _unwritable_dir(tmp_path) / "results.sqlite"
    else:
        assert kind == "missing"
    return path


_DB_NEEDLE = {"dir": "unable to open", "notdb": "not a database", "random": "not a database",
              "truncated": "not a database", "schema99": "schema version 99", "readonly": "unable to open",
              "empty": "its tables are missing", "foreign": "no meta table"}


@pytest.mark.parametrize("kind, args, needle", [
    # a command that writes results: the bad database is refused before any simulation
    ("dir", [*RUN, "--db", "{bad}"], None),
    ("notdb", [*RUN, "--db", "{bad}"], None),
    ("random", [*RUN, "--db", "{bad}"], None),
    ("truncated", [*RUN, "--db", "{bad}"], None),
    ("schema99", [*RUN, "--db", "{bad}"], None),
    ("readonly", [*RUN, "--db", "{bad}"], None),
    ("dir", ["sweep", "{spec}", "--db", "{bad}", "--dry-run"], None),
    ("notdb", ["sweep", "{spec}", "--db", "{bad}", "--dry-run"], None),
    ("schema99", ["sweep", "{spec}", "--db", "{bad}", "--dry-run"], None),
    ("dir", ["study", "default", "--db", "{bad}"], None),
    ("notdb", ["study", "default", "--db", "{bad}"], None),
    ("readonly", ["study", "default", "--db", "{bad}"], None),
    ("notdb", ["validate", "--trace", "{trace}", "--hardware", "h200", "--db", "{bad}"], None),
    ("dir", ["validate", "--trace", "{trace}", "--hardware", "h200", "--db", "{bad}"], None),
    # merge: a bad shard into the good database, the good one into a bad target, a good shard before a bad one
    ("notdb", ["merge", "{good}", "{bad}"], None),
    ("random", ["merge", "{good}", "{bad}"], None),
    ("truncated", ["merge", "{good}", "{bad}"], None),
    ("schema99", ["merge", "{good}", "{bad}"], None),
    ("dir", ["merge", "{good}", "{bad}"], "not a results database"),
    ("missing", ["merge", "{good}", "{bad}"], "not a results database"),
    ("dir", ["merge", "{good}", "{other}", "{bad}"], "not a results database"),
    # every shard is checked, read-only, before any is merged (a good shard before a bad one was
    # merged; an empty or foreign shard was accepted and rewritten as a results database)
    ("notdb", ["merge", "{good}", "{other}", "{bad}"], None),
    ("schema99", ["merge", "{good}", "{other}", "{bad}"], None),
    ("empty", ["merge", "{good}", "{bad}"], None),
    ("foreign", ["merge", "{good}", "{bad}"], None),
    ("foreign", [*RUN, "--db", "{bad}"], None),   # used to get the results tables added
    ("notdb", ["merge", "{bad}", "{good}"], None),
    ("schema99", ["merge", "{bad}", "{good}"], None),
    ("dir", ["merge", "{bad}", "{good}"], None),
    ("readonly", ["merge", "{bad}", "{good}"], None),
    # report and export (Python commands)
    ("dir", ["PY", "export", "--db", "{bad}", "--out", "{tmp}/out"], "no such results database"),
    ("missing", ["PY", "export", "--db", "{bad}", "--out", "{tmp}/out"], "no such results database"),
    ("schema99", ["PY", "export", "--db", "{bad}", "--out", "{tmp}/out"], None),
    ("schema99", ["PY", "report", "--db", "{bad}", "--out", "{tmp}/out"], None),
    # these ended in sqlite3 tracebacks that named no file (and report had made its folder)
    ("notdb", ["PY", "report", "--db", "{bad}", "--out", "{tmp}/out"], None),
    ("empty", ["PY", "report", "--db", "{bad}", "--out", "{tmp}/out"], "not an IndexSim results database"),
    ("foreign", ["PY", "export", "--db", "{bad}", "--out", "{tmp}/out"], "not an IndexSim results database"),
    ("truncated", ["PY", "export", "--db", "{bad}", "--out", "{tmp}/out"], None),
    ("dir", ["PY", "report", "--db", "{bad}", "--out", "{tmp}/out"], "no such results database"),
    ("missing", ["PY", "export", "--db", "{good}", "--format", "xml", "--out", "{tmp}/out"], "'xml'"),
])
def test_a_bad_database_is_named_and_the_good_one_left_as_it_was(exe, tmp_path, tiny_trace, good_dbs, kind, args, needle):
    """Databases: --db at a directory, a non-SQLite file, another schema, a read-only place; merge,
    report and export on such files. The good databases (and the bad file) are byte-for-byte unchanged."""
    good, other = tmp_path / "good.sqlite", tmp_path / "other.sqlite"
    shutil.copyfile(good_dbs[0], good)
    shutil.copyfile(good_dbs[1], other)
    before = {p: p.read_bytes() for p in (good, other)}
    bad = _bad_db(tmp_path, kind)
    # The refused file too: it is checked before anything is written to it.
    if bad.is_file():
        before[bad] = bad.read_bytes()
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: s\ndescription: x\nbase: {hardware: h200, workload: glm-5, fast: true}\n"
                    "axes:\n  step.context: [1024, 2048]\n")
    fill = {"{bad}": bad, "{good}": good, "{other}": other, "{trace}": tiny_trace, "{spec}": spec, "{tmp}": tmp_path}
    python = args[0] == "PY"
    argv = [str(fill.get(a, a)).replace("{tmp}", str(tmp_path)) for a in (args[1:] if python else args)]
    r = _call(exe, argv, python=python, timeout=60)
    named = str(bad) if "{bad}" in args else needle
    _refused(r, [named, needle or _DB_NEEDLE[kind]])
    assert "wall" not in r.stdout   # no simulation ran
    for p, b in before.items():
        assert p.read_bytes() == b, f"{p} changed"
    if kind in ("missing", "readonly"):
        assert not bad.exists()
    assert not (tmp_path / "out").exists() or not os.listdir(tmp_path / "out")
