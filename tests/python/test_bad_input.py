# SPDX-License-Identifier: Apache-2.0
"""Bad input from issue 25's matrix: numbers a count cannot hold. Each reproducer exits with status 2
(never a signal, never 0) and one error line that names the key or argument and its value.

Before the fix, a 32-bit key at 2**32 wrapped to 0 and divided by it (SIGFPE), 1e20 was cast to an
integer (undefined), a port count of 2**32 - 1 died in std::bad_alloc, and --batch 4294967297 ran
as batch 1."""
import os
import stat
import subprocess

import pytest

RUN = ["run", "--hardware", "h200", "--workload", "glm-5", "--context", "1024", "--fast"]


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
