# SPDX-License-Identifier: Apache-2.0
"""The pure-Python trace reader: it reads what the C++ writer wrote (totals equal `indexsim trace
info --json` of the same file, stored next to the fixture), and rejects each kind of damage with the
block and byte offset, as the C++ reader does."""
import importlib.util
import json
import pathlib
import struct
import types
import zlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "data" / "traces" / "glm-5.3-flash-decode-3k.itr"
INFO = ROOT / "tests" / "data" / "traces" / "glm-5.3-flash-decode-3k.info.json"


def _load_reader():
    # Load the module file directly: the package's other modules may need the compiled core.
    spec = importlib.util.spec_from_file_location("indexsim_trace", ROOT / "analysis" / "indexsim" / "trace.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


trace = _load_reader()


def _copy(tmp_path, edit):
    data = bytearray(FIXTURE.read_bytes())
    edit(data)
    p = tmp_path / "damaged.itr"
    p.write_bytes(bytes(data))
    return p


def _read_all(p):
    meta, records = trace.read(str(p))
    return meta, list(records)


def test_reads_every_record_with_the_cpp_totals():
    want = json.loads(INFO.read_text())
    got = trace.summarize(str(FIXTURE))
    assert got["metadata"]["source"] == "emulated"
    assert got["metadata"] == want["metadata"]
    for kind, w in want["by_kind"].items():
        g = got["by_kind"][kind]
        for key in ("kernels", "ctas", "bytes_read", "bytes_written"):
            assert g[key] == w[key], (kind, key)
        assert g["flops"] == pytest.approx(w["flops"]), kind
    for cls, w in want["by_class"].items():
        assert got["by_class"][cls] == w, cls


def test_records_are_streamed_not_loaded_whole():
    meta, records = trace.read(str(FIXTURE))
    assert isinstance(records, types.GeneratorType)
    first = next(records)
    assert first["type"] == "tensor" and first["offset"] > 16
    gathers = [r for r in records if r["type"] == "access" and r["kind"] == "gather"]
    assert gathers and all(r["rows"] == sorted(r["rows"]) for r in gathers)


def test_a_flipped_byte_fails_the_crc_with_block_and_offset(tmp_path):
    p = _copy(tmp_path, lambda d: d.__setitem__(len(d) // 2, d[len(d) // 2] ^ 0x10))
    with pytest.raises(trace.TraceError) as e:
        _read_all(p)
    assert "CRC mismatch" in str(e.value)
    assert e.value.block is not None and e.value.offset > 16


def test_a_truncated_file_is_reported(tmp_path):
    p = _copy(tmp_path, lambda d: d.__delitem__(slice(len(d) - 100, len(d))))
    with pytest.raises(trace.TraceError, match="truncated"):
        _read_all(p)


def test_a_wrong_magic_says_it_is_not_a_trace(tmp_path):
    p = _copy(tmp_path, lambda d: d.__setitem__(0, ord("X")))
    with pytest.raises(trace.TraceError, match="wrong magic"):
        _read_all(p)


def test_a_newer_version_names_both_versions(tmp_path):
    def newer(d):
        struct.pack_into("<I", d, 8, trace.FORMAT_VERSION + 1)
        (n,) = struct.unpack_from("<I", d, 12)
        struct.pack_into("<I", d, 16 + n, zlib.crc32(bytes(d[:16 + n])) & 0xFFFFFFFF)

    p = _copy(tmp_path, newer)
    with pytest.raises(trace.TraceError) as e:
        _read_all(p)
    assert f"version {trace.FORMAT_VERSION + 1}" in str(e.value)
    assert f"reader's version {trace.FORMAT_VERSION}" in str(e.value)


def test_a_format_4_trace_says_which_kernels_store_after_their_math(exe, tmp_path):
    # A generated step (format 6): its GEMMs, dense and grouped (MoE), store their tiles after their
    # math and load A and B in K blocks (load_steps = ceil(K / 128) for DeepGEMM's BLOCK_K); no other
    # kernel does either.
    import subprocess
    p = tmp_path / "step.itr"
    subprocess.run([str(exe), "trace", "gen", "--workload", "glm-5", "--context", "4096", "-o", str(p),
                    "--set", "workload.model.num_layers=2",
                    "--set", "workload.layers=[{first: 0, last: 0, attention: dsa, indexer: full, mlp: dense},"
                             " {first: 1, last: 1, attention: dsa, indexer: full, mlp: moe}]"],
                   check=True, capture_output=True)
    meta, records = trace.read(str(p))
    assert meta["format_version"] == 6
    kernels = [r for r in records if r.get("type") == "kernel" or "stores_after_math" in r]
    gemms = [k for k in kernels if k["kind"] in ("gemm", "moe_gemm")]
    others = [k for k in kernels if k["kind"] not in ("gemm", "moe_gemm")]
    assert {k["kind"] for k in gemms} == {"gemm", "moe_gemm"} and others
    for k in gemms:
        assert k["stores_after_math"] and k["load_steps"] >= 1, k["name"]
    for k in others:
        assert not k["stores_after_math"] and k["load_steps"] == 0, k["name"]
    # Version 6: DeepGEMM's FP8 GEMMs (GLM-5's projections and experts) run as persistent grids; no
    # other kernel does.
    assert any(k["persistent"] for k in gemms)
    assert not any(k["persistent"] for k in others)
    # Version 5: the project's top-k kernels carry their warp-instruction counts (Nsight Compute's,
    # traces/kernel_geometry.hpp): the sort of one row of k = 2048 issues 157,472; no library kernel
    # has a count.
    topk = [k for k in kernels if k["kind"] == "topk"]
    assert topk and all(k["warp_instructions"] > 0 for k in topk)
    sort = [k for k in topk if k["name"].endswith("topk_sort")][0]
    assert abs(sort["warp_instructions"] / sort["grid"][0] - 157472.0) < 1e-6
    assert all(k["warp_instructions"] == 0 for k in kernels if k["kind"] != "topk")
