# SPDX-License-Identifier: Apache-2.0
"""Pure-Python reader of IndexSim .itr traces (layout in traces/FORMAT.md).

    meta, records = read("step.itr")
    for rec in records:          # streamed: one block in memory at a time
        if rec["type"] == "access": ...

Every CRC is checked; any defect raises TraceError naming the file, the block and the byte offset,
with the same reasons as the C++ reader.
"""
from __future__ import annotations

import json
import os
import struct
import zlib
from typing import Any, Dict, Iterator, Tuple

FORMAT_VERSION = 6
MAGIC = b"IDXTRACE"
TENSOR_CLASSES = ["weights", "kv_cache", "indexer_cache", "activations", "linear_state", "topk_indices", "scratch", "peer"]
PRECISIONS = ["fp32", "tf32", "bf16", "fp16", "fp8", "fp4", "simt"]
BLOCK_TYPES = {1: "tensor", 2: "kernel", 3: "cta", 4: "access"}
_BLOCK_HEADER = struct.Struct("<BII")


class TraceError(Exception):
    def __init__(self, path: str, offset: int, reason: str, block: int | None = None):
        where = f"block {block} " if block is not None else ""
        super().__init__(f"{path}: {where}at byte offset {offset}: {reason}")
        self.path, self.offset, self.reason, self.block = path, offset, reason, block


class _Payload:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, fmt: str):
        s = struct.calcsize(fmt)
        if self.pos + s > len(self.data):
            raise ValueError(f"payload ends inside a field ({s} bytes needed at payload byte {self.pos} of {len(self.data)})")
        v = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += s
        return v if len(v) > 1 else v[0]

    def string(self) -> str:
        n = self.take("<I")
        if self.pos + n > len(self.data):
            raise ValueError(f"string of {n} bytes runs past the payload end")
        s = self.data[self.pos:self.pos + n].decode("utf-8")
        self.pos += n
        return s

    def varint(self) -> int:
        v, shift = 0, 0
        while shift < 64:
            b = self.take("<B")
            v |= (b & 0x7F) << shift
            if not b & 0x80:
                return v
            shift += 7
        raise ValueError("varint longer than 10 bytes")


def _decode(kind: str, p: _Payload) -> Dict[str, Any]:
    if kind == "tensor":
        rec = {"id": p.take("<I"), "name": p.string()}
        cls = p.take("<B")
        if cls >= len(TENSOR_CLASSES):
            raise ValueError(f"unknown tensor class {cls}")
        rec.update({"cls": TENSOR_CLASSES[cls], "layer": p.take("<i"), "bytes": p.take("<Q")})
    elif kind == "kernel":
        rec = {"id": p.take("<I"), "name": p.string(), "kind": p.string(), "layer": p.take("<i"),
               "stream": p.take("<I"), "grid": list(p.take("<3I")), "block": list(p.take("<3I")),
               "smem_bytes": p.take("<I"), "regs_per_thread": p.take("<I")}
        n = p.take("<B")
        flops = {}
        for i in range(n):
            f = p.take("<d")
            if i < len(PRECISIONS):
                flops[PRECISIONS[i]] = f
        rec["flops"] = flops
        rec["double_buffered"] = p.take("<B") != 0
        rec["measured_ns"] = p.take("<Q")
        nd = p.take("<I")
        if nd * 4 > len(p.data) - p.pos:
            raise ValueError(f"dependency count {nd} runs past the payload end")
        rec["deps"] = list(p.take(f"<{nd}I")) if nd > 1 else ([p.take("<I")] if nd == 1 else [])
        # Format version 2 appends wait_ns; a version-1 kernel block ends after its deps.
        rec["wait_ns"] = p.take("<Q") if len(p.data) - p.pos >= 8 else 0
        # Version 3 appends simt_overlaps_mma; earlier blocks were written for overlapping pipes.
        rec["simt_overlaps_mma"] = p.take("<B") != 0 if len(p.data) - p.pos >= 1 else True
        # Version 4 appends stores_after_math and load_steps; earlier blocks wrote beside their
        # math and loaded one record after another.
        rec["stores_after_math"] = p.take("<B") != 0 if len(p.data) - p.pos >= 1 else False
        rec["load_steps"] = p.take("<I") if len(p.data) - p.pos >= 4 else 0
        # Version 5 appends warp_instructions (0: unknown).
        rec["warp_instructions"] = p.take("<d") if len(p.data) - p.pos >= 8 else 0.0
        # Version 6 appends persistent (a persistent grid's work units).
        rec["persistent"] = p.take("<B") != 0 if len(p.data) - p.pos >= 1 else False
    elif kind == "cta":
        k, c, sm, s, e = p.take("<IIIQQ")
        rec = {"kernel": k, "cta": c, "sm": sm, "start_ns": s, "end_ns": e}
    else:
        k, first, count, akind, write, tensor, base, cta_stride = p.take("<IIIBBIQq")
        if akind > 1:
            raise ValueError(f"unknown access kind {akind}")
        rec = {"kernel": k, "cta_first": first, "cta_count": count, "kind": "strided" if akind == 0 else "gather",
               "write": write != 0, "tensor": tensor, "base": base, "cta_stride_bytes": cta_stride}
        if akind == 0:
            eb, cnt, stride = p.take("<IQq")
            rec.update({"elem_bytes": eb, "count": cnt, "stride_bytes": stride, "bytes_per_cta": eb * cnt})
        else:
            rb, pitch, n = p.take("<IQI")
            if n > len(p.data) - p.pos:
                raise ValueError(f"row count {n} runs past the payload end")
            rows, prev = [], 0
            for _ in range(n):
                z = p.varint()
                prev += (z >> 1) ^ -(z & 1)
                if not 0 <= prev <= 0xFFFFFFFF:
                    raise ValueError("gather row index out of range")
                rows.append(prev)
            rec.update({"row_bytes": rb, "row_pitch_bytes": pitch, "rows": rows, "bytes_per_cta": rb * n})
        rec["total_bytes"] = rec["bytes_per_cta"] * count
    rec["type"] = kind
    return rec


def _read_header(path: str, f) -> Tuple[Dict[str, Any], int, int]:
    size = os.fstat(f.fileno()).st_size
    fixed = f.read(16)
    if len(fixed) >= 8 and fixed[:8] != MAGIC:
        raise TraceError(path, 0, 'wrong magic: not an IndexSim trace (expected "IDXTRACE")')
    if size < 20:
        raise TraceError(path, size, f"truncated header: file has {size} bytes, a header needs at least 20")
    version, json_len = struct.unpack_from("<II", fixed, 8)
    if version > FORMAT_VERSION:
        raise TraceError(path, 8, f"trace format version {version} is newer than this reader's version "
                                  f"{FORMAT_VERSION}: update IndexSim to read it")
    if version == 0:
        raise TraceError(path, 8, "trace format version 0 is not valid")
    if 16 + json_len + 4 > size:
        raise TraceError(path, 12, f"truncated header: metadata length {json_len} runs past the end of the {size}-byte file")
    blob = f.read(json_len)
    (want,) = struct.unpack("<I", f.read(4))
    got = zlib.crc32(fixed + blob) & 0xFFFFFFFF
    if want != got:
        raise TraceError(path, 16 + json_len, f"header CRC mismatch (stored {want:08x}, computed {got:08x})")
    try:
        meta = json.loads(blob.decode("utf-8"))
    except ValueError as e:
        raise TraceError(path, 16, f"metadata is not valid JSON: {e}") from None
    if not isinstance(meta, dict) or "source" not in meta:
        raise TraceError(path, 16, "metadata has no `source` field")
    return meta, 16 + json_len + 4, size


def _records(path: str, f, offset: int, size: int) -> Iterator[Dict[str, Any]]:
    block = 0
    with f:
        while offset != size:
            if size - offset < _BLOCK_HEADER.size:
                raise TraceError(path, offset, f"truncated block header: {size - offset} bytes left, 9 needed", block)
            btype, length, want = _BLOCK_HEADER.unpack(f.read(_BLOCK_HEADER.size))
            kind = BLOCK_TYPES.get(btype)
            if kind is None:
                raise TraceError(path, offset, f"unknown block type {btype}", block)
            if length > size - offset - _BLOCK_HEADER.size:
                raise TraceError(path, offset, f"truncated block: payload of {length} bytes, only "
                                               f"{size - offset - _BLOCK_HEADER.size} left in the file", block)
            data = f.read(length)
            got = zlib.crc32(data) & 0xFFFFFFFF
            if got != want:
                raise TraceError(path, offset, f"payload CRC mismatch (stored {want:08x}, computed {got:08x})", block)
            p = _Payload(data)
            try:
                rec = _decode(kind, p)
            except (ValueError, struct.error, UnicodeDecodeError) as e:
                raise TraceError(path, offset, f"malformed payload: {e}", block) from None
            if p.pos != len(data):
                raise TraceError(path, offset, f"{len(data) - p.pos} unread bytes at the end of the payload", block)
            rec["offset"] = offset
            yield rec
            offset += _BLOCK_HEADER.size + length
            block += 1


def read(path: str) -> Tuple[Dict[str, Any], Iterator[Dict[str, Any]]]:
    """The metadata (header checked now) and an iterator over the records (each block checked as read)."""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise TraceError(str(path), 0, f"cannot open file: {e.strerror}") from None
    try:
        meta, offset, size = _read_header(str(path), f)
    except BaseException:
        f.close()
        raise
    return meta, _records(str(path), f, offset, size)


def summarize(path: str) -> Dict[str, Any]:
    """Totals as `indexsim trace info --json` reports them: per kernel kind and per tensor class."""
    meta, records = read(path)
    kinds: Dict[int, str] = {}
    classes: Dict[int, str] = {}
    by_kind: Dict[str, Dict[str, Any]] = {}
    by_class: Dict[str, Dict[str, int]] = {}

    def kind_entry(k):
        return by_kind.setdefault(k, {"kernels": 0, "ctas": 0, "bytes_read": 0, "bytes_written": 0, "flops": {}})

    for r in records:
        if r["type"] == "tensor":
            classes[r["id"]] = r["cls"]
            c = by_class.setdefault(r["cls"], {"tensors": 0, "footprint_bytes": 0, "bytes_read": 0, "bytes_written": 0})
            c["tensors"] += 1
            c["footprint_bytes"] += r["bytes"]
        elif r["type"] == "kernel":
            kinds[r["id"]] = r["kind"]
            e = kind_entry(r["kind"])
            e["kernels"] += 1
            e["ctas"] += r["grid"][0] * r["grid"][1] * r["grid"][2]
            for p, v in r["flops"].items():
                if v:
                    e["flops"][p] = e["flops"].get(p, 0.0) + v
        elif r["type"] == "access":
            key = "bytes_written" if r["write"] else "bytes_read"
            kind_entry(kinds[r["kernel"]])[key] += r["total_bytes"]
            by_class[classes[r["tensor"]]][key] += r["total_bytes"]
    return {"metadata": meta, "by_kind": by_kind, "by_class": by_class}
