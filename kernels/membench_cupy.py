#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Memory microbenchmarks on a lent GPU, for checking the L2 and DRAM models (issue: DRAM
mechanisms): dependent-load latency by working set, streams (read, write, copy, 2 reads : 1 write),
and random reads of 32-256 B pieces spread over 4 GiB. CuPy RawKernels, CUDA events, median of
repetitions; the L2 is flushed by a 256 MiB write before each timed stream repetition.

Prints one tab-separated row per case: kind, case, median, min, max, unit, derived figure.
Usage: python3 kernels/membench_cupy.py [SECTION ...]   (default: chase streams random)
  chase, streams, random: as above; chase_clean: the DRAM chase after a read-only flush; streams_clean: the streams after a read-only flush (the L2
  left full of clean lines, not dirty ones); l2_policy, l2_policy_ncu, l2_stride_ncu: which lines the L2 keeps (below); l2: read bandwidth of L2-resident buffers (4-40 MiB,
  read 64 times over in one launch); chase_dist: the DRAM chase's per-load latency distribution; chase_l2_dist: the same for warm L2 hits; sms: L2 and DRAM read bandwidth by the number of SMs reading.
The simulator's counterparts: `indexsim bench memory` (chase, stream, random patterns).
"""
import os
import statistics
import sys

import cupy as cp

SRC = r'''
extern "C" __global__ void chase(const unsigned int* __restrict__ next, unsigned int start, int steps,
                                 unsigned int* out) {
  unsigned int i = start;
  for (int s = 0; s < steps; ++s) i = __ldcg(next + i);  // L1 bypassed: L2 or DRAM every step
  out[0] = i;
}
__device__ void read_body(const uint4* __restrict__ a, size_t n, unsigned int* out) {
  unsigned int acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = __ldcg(a + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) out[0] = acc;  // keeps the loads; practically never stores
}
__device__ void write_body(uint4* __restrict__ a, size_t n, unsigned int tag) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    a[i] = make_uint4((unsigned)i, tag, 2u, 3u);
}
extern "C" __global__ void read_stream(const uint4* __restrict__ a, size_t n, unsigned int* out) { read_body(a, n, out); }
extern "C" __global__ void write_stream(uint4* __restrict__ a, size_t n) { write_body(a, n, 1u); }
extern "C" __global__ void copy_stream(const uint4* __restrict__ a, uint4* __restrict__ b, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    b[i] = __ldcg(a + i);
}
extern "C" __global__ void add_stream(const uint4* __restrict__ a, const uint4* __restrict__ b,
                                      uint4* __restrict__ c, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint4 x = __ldcg(a + i), y = __ldcg(b + i);
    c[i] = make_uint4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
}
// The dependent chase with each load's latency recorded (SM clocks from issue to use): the
// distribution shows what delays DRAM reads now and then (refresh, write drains).
extern "C" __global__ void chase_timed(const unsigned int* __restrict__ next, unsigned int start, int steps,
                                       unsigned int* lat, unsigned int* out) {
  __shared__ unsigned int sl[8192];  // steps <= 8192: kept on chip until the chase ends
  unsigned int i = start;
  for (int s = 0; s < steps; ++s) {
    const long long t0 = clock64();
    i = __ldcg(next + i);
    sl[s] = i;  // the store waits for the load, and the clock is read after it
    const long long t1 = clock64();
    sl[s] = (unsigned int)(t1 - t0);
  }
  for (int s = 0; s < steps; ++s) lat[s] = sl[s];
  out[0] = i;
}
// The same read `reps` times over: an L2-resident buffer's bandwidth without a launch per pass.
extern "C" __global__ void read_repeat(const uint4* __restrict__ a, size_t n, int reps, unsigned int* out) {
  unsigned int acc = 0;
  for (int r = 0; r < reps; ++r)
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
      uint4 v = __ldcg(a + i);
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  if (acc == 0x12345678u) out[0] = acc;
}
// The L2 replacement probe's kernels: a read and a write named apart from the streams', so that
// Nsight Compute can pick them out (--kernel-name regex:l2p_), and a one-thread idle wait.
extern "C" __global__ void l2p_read(const uint4* __restrict__ a, size_t n, unsigned int* out) { read_body(a, n, out); }
extern "C" __global__ void l2p_write(uint4* __restrict__ a, size_t n) { write_body(a, n, 4u); }
// Whole 128 B lines `stride` lines apart, eight threads a line: how the L2 spreads a strided buffer.
extern "C" __global__ void l2p_read_strided(const uint4* __restrict__ a, size_t lines, size_t stride,
                                            unsigned int* out) {
  unsigned int acc = 0;
  for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < lines * 8; t += (size_t)gridDim.x * blockDim.x) {
    uint4 v = __ldcg(a + (t / 8) * stride * 8 + t % 8);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) out[0] = acc;
}
extern "C" __global__ void idle_wait(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
}
// Each group of `piece16` threads reads one piece of 16·piece16 bytes at a pseudo-random
// piece-aligned place (a hash of the piece number) among `span_pieces`; `pieces` pieces in all.
extern "C" __global__ void random_read(const uint4* __restrict__ a, unsigned long long span_pieces, int piece16,
                                       unsigned long long pieces, unsigned int* out) {
  unsigned int acc = 0;
  const unsigned long long total = pieces * piece16;
  for (unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; t < total;
       t += (unsigned long long)gridDim.x * blockDim.x) {
    unsigned long long p = t / piece16;
    unsigned int h = (unsigned int)p * 2654435761u;
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
    unsigned long long where = ((unsigned long long)h * 2654435761ull + p) % span_pieces;
    uint4 v = __ldcg(a + where * piece16 + (t % piece16));
    acc ^= v.x ^ v.w;
  }
  if (acc == 0x12345678u) out[0] = acc;
}
'''


def timed(fn, reps, flush=None):
    """Median, min, max of `reps` timed calls; `flush` (a callable) runs before each one."""
    for _ in range(2):
        fn()
    times = []
    for _ in range(reps):
        if flush is not None:
            flush()
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(cp.cuda.get_elapsed_time(s, e) * 1000.0)  # us
    return statistics.median(times), min(times), max(times)


def row(kind, case, t, unit, derived):
    print(f"{kind}\t{case}\t{t[0]:.3f}\t{t[1]:.3f}\t{t[2]:.3f}\t{unit}\t{derived}")
    sys.stdout.flush()


def main():
    mod = cp.RawModule(code=SRC, options=("-std=c++17",))
    chase, rd, wr, cpy, add, rnd = (mod.get_function(n) for n in
                                    ("chase", "read_stream", "write_stream", "copy_stream", "add_stream", "random_read"))
    rrep = mod.get_function("read_repeat")
    sections = sys.argv[1:] or ["chase", "streams", "random"]
    dev = cp.cuda.Device(0)
    sms = dev.attributes["MultiProcessorCount"]
    print(f"# membench_cupy: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, {sms} SMs, CuPy {cp.__version__}")
    print("#\tkind\tcase\tmedian\tmin\tmax\tunit\tderived")
    out = cp.zeros(4, dtype=cp.uint32)
    flush_buf = cp.zeros(256 << 20, dtype=cp.uint8)
    flush_sums = cp.zeros(4, dtype=cp.uint32)

    def flush():  # a 256 MiB memset: leaves the L2 full of dirty lines
        flush_buf.fill(0)

    def flush_clean():  # a 256 MiB read: leaves it full of clean lines
        rd((sms * 16,), (256,), (flush_buf, cp.uint64((256 << 20) // 16), flush_sums))
    rs = cp.random.RandomState(1)

    # Dependent loads, one thread: a random cycle over whole 128 B lines of the working set. Up to
    # 48 MiB (inside the L2) the chase walks the whole cycle, warm; beyond, 20,000 steps after a
    # 256 MiB flush, so that every step misses the L2.
    sizes = (1, 8, 32, 48, 128, 1024, 4096) if "chase" in sections else ()
    if "chase_clean" in sections:  # beyond the L2 only, after a read-only flush
        sizes = tuple(sorted(set(sizes) | {128, 1024}))
    for mib in sizes:
        lines = (mib << 20) // 128
        in_l2 = mib <= 48
        steps = lines if in_l2 else 20000
        perm = rs.permutation(lines).astype(cp.uint32)
        nxt = cp.zeros(lines * 32, dtype=cp.uint32)      # 32 words a line; the chase uses word 0
        nxt[perm * 32] = cp.roll(perm, -1) * 32
        start = int(perm[0]) * 32
        if "chase" in sections:
            t = timed(lambda: chase((1,), (1,), (nxt, cp.uint32(start), cp.int32(steps), out)), 5,
                      None if in_l2 else flush)
            row("chase", f"{mib}MiB", tuple(x * 1000.0 / steps for x in t), "ns/load",
                "whole cycle, warm" if in_l2 else "20000 steps after an L2 flush")
        if "chase_clean" in sections and not in_l2:
            t = timed(lambda: chase((1,), (1,), (nxt, cp.uint32(start), cp.int32(steps), out)), 5, flush_clean)
            row("chase_clean", f"{mib}MiB", tuple(x * 1000.0 / steps for x in t), "ns/load",
                "20000 steps after a read-only L2 flush")
        del nxt, perm

    # Streams over 1 GiB arrays (far beyond the 50-60 MB L2), 16 B a thread-iteration.
    n = (1 << 30) // 16
    a = cp.ones(n * 4, dtype=cp.uint32)
    b = cp.ones(n * 4, dtype=cp.uint32)
    c = cp.zeros(n * 4, dtype=cp.uint32)
    grid, block = (sms * 16,), (256,)
    modes = [(sec, f) for sec, f in (("streams", flush), ("streams_clean", flush_clean)) if sec in sections]
    for name, fn, moved in (("read", lambda: rd(grid, block, (a, cp.uint64(n), out)), 1),
                            ("write", lambda: wr(grid, block, (c, cp.uint64(n))), 1),
                            ("copy", lambda: cpy(grid, block, (a, c, cp.uint64(n))), 2),
                            ("add_2r1w", lambda: add(grid, block, (a, b, c, cp.uint64(n))), 3)):
        for sec, f in modes:  # interleaved, so that drift shows in both alike
            t = timed(fn, 10, f)
            kind = "stream" if sec == "streams" else "stream_clean"
            row(kind, name + "_1GiB", t, "us", f"{moved * (1 << 30) / t[0] / 1e3:.1f} GB/s")
    del b, c

    # L2-resident reads: a buffer read 64 times over in one launch, warm (the first pass's misses
    # are 1/64 of the bytes).
    for mib in ((4, 8, 16, 24, 32, 40) if "l2" in sections else ()):
        m = (mib << 20) // 16
        t = timed(lambda: rrep(grid, block, (a, cp.uint64(m), cp.int32(64), out)), 10)
        row("l2_read", f"{mib}MiB_x64", t, "us", f"{64 * (mib << 20) / t[0] / 1e3:.1f} GB/s")

    # DRAM latency distribution: 12 x 8,192 dependent loads over a cycle of 1 GiB of lines,
    # after a read-only flush. Per load: SM clocks from issue to use (clock64), in ns at the SM's
    # clock. Delays that come every few microseconds for a few hundred ns are what refresh does.
    if "chase_dist" in sections:
        # Pages in order, the lines of each 2 MiB page in random order: every load misses the L2
        # (each line once a cycle through 1 GiB) but not the TLB (one page at a time), whose misses
        # would otherwise delay a quarter of the loads by ~300 ns.
        lines = (1 << 30) // 128
        per_page = (2 << 20) // 128
        pages = lines // per_page
        within = cp.argsort(rs.random_sample((pages, per_page)), axis=1).astype(cp.uint32)
        perm = (cp.arange(pages, dtype=cp.uint32)[:, None] * per_page + within).ravel()
        nxt = cp.zeros(lines * 32, dtype=cp.uint32)
        nxt[perm * 32] = cp.roll(perm, -1) * 32
        steps = 8192
        lat = cp.zeros(steps, dtype=cp.uint32)
        ctd = mod.get_function("chase_timed")
        clock_GHz = dev.attributes["ClockRate"] / 1e6  # kHz -> GHz (the SM's peak clock)
        import numpy as np
        for rep in range(3):
            parts = []
            for launch in range(12):  # 12 chases of 8,192 loads, each from its own page
                flush_clean()
                cp.cuda.Device().synchronize()
                first = int(perm[(rep * 12 + launch) * per_page]) * 32
                ctd((1,), (1,), (nxt, cp.uint32(first), cp.int32(steps), lat, out))
                cp.cuda.Device().synchronize()
                parts.append(cp.asnumpy(lat).astype("float64")[100:] / clock_GHz)
            ns = np.concatenate(parts)
            base = float(np.median(ns))
            slow = ns > base + 150.0
            t = np.cumsum(ns)
            starts = t[1:][slow[1:] & ~slow[:-1]]
            gaps = np.diff(starts)
            q = np.percentile(ns, [50, 90, 99, 99.9])
            row("chase_dist", f"1GiB_rep{rep}", (q[0], float(ns.min()), float(ns.max())), "ns/load",
                f"p90 {q[1]:.0f} p99 {q[2]:.0f} p99.9 {q[3]:.0f} ns; {100 * slow.mean():.2f} % of loads over "
                f"median+150 ns, their median excess {float(np.median(ns[slow]) - base) if slow.any() else 0:.0f} ns; "
                f"median gap between slow episodes {float(np.median(gaps)) if len(gaps) else 0:.0f} ns "
                f"({len(starts)} episodes in {t[-1] / 1e3:.0f} us); SM clock {clock_GHz:.3f} GHz")
        del nxt, perm, lat

    # L2 hit latency by load, one thread on one SM, warm: a random cycle over whole lines of a 1 or
    # 8 MiB working set, walked three times, the last walk's loads timed (chase_timed). Whether the
    # hits split into a near and a far class, or the far lines' copies make them all near.
    if "chase_l2_dist" in sections:
        import numpy as np
        ctd = mod.get_function("chase_timed")
        clock_GHz = dev.attributes["ClockRate"] / 1e6
        lat = cp.zeros(8192, dtype=cp.uint32)
        for mib in (1, 8):
            lines = (mib << 20) // 128
            perm = cp.argsort(rs.random_sample(lines)).astype(cp.uint32)
            nxt = cp.zeros(lines * 32, dtype=cp.uint32)
            nxt[perm * 32] = cp.roll(perm, -1) * 32
            steps = min(8192, lines)
            flush_clean()
            for walk in range(3):  # each walk starts where the last ended; the last one is timed
                ctd((1,), (1,), (nxt, cp.uint32(int(perm[0]) * 32), cp.int32(steps), lat, out))
            cp.cuda.Device().synchronize()
            ns = cp.asnumpy(lat[:steps]).astype("float64")[16:] / clock_GHz
            q = np.percentile(ns, [5, 25, 50, 75, 95])
            hist, edges = np.histogram(ns, bins=np.arange(60.0, 400.0, 10.0))
            row("chase_l2_dist", f"{mib}MiB_warm", (q[2], float(ns.min()), float(ns.max())), "ns/load",
                f"p5 {q[0]:.0f} p25 {q[1]:.0f} p75 {q[3]:.0f} p95 {q[4]:.0f} ns; 10-ns bins from 60 ns: "
                + " ".join(str(int(h)) for h in hist) + f"; SM clock {clock_GHz:.3f} GHz")
            del nxt, perm

    # Bandwidth by the number of SMs reading: one 1,024-thread CTA an SM (a grid of k CTAs lands on
    # k SMs), from the L2 (an 8 MiB buffer, warm, read `reps` times in one launch) and from DRAM (a
    # 1 GiB read after a read-only flush). Per-SM limits show as bandwidth growing with k; a shared
    # limit (L2 slices, HBM) as a plateau.
    for k in ((1, 2, 4, 8, 16, 33, 66, 132) if "sms" in sections else ()):
        m = (8 << 20) // 16
        reps = max(1, k // 2)
        t = timed(lambda: rrep((k,), (1024,), (a, cp.uint64(m), cp.int32(reps), out)), 7)
        row("l2_read_sms", f"{k}SMs_8MiB_x{reps}", t, "us", f"{reps * (8 << 20) / t[0] / 1e3:.1f} GB/s")
        t = timed(lambda: rd((k,), (1024,), (a, cp.uint64(n), out)), 5, flush_clean)
        row("dram_read_sms", f"{k}SMs_1GiB", t, "us", f"{(1 << 30) / t[0] / 1e3:.1f} GB/s")

    # Which lines the L2 keeps. After either flush (memset: the L2 full of dirty lines; read: full of
    # clean ones), optionally 100 us idle, a buffer Y of 8/32/48 MiB (L2P_SIZES_MIB) is read, or written then read,
    # or read then read; the last read is the probe (kernel l2p_read). An LRU L2 of 60 MB keeps
    # all of Y in the second and third cases, and the first case's probe writes back as many dirty
    # bytes as it brings in. `l2_policy` times the probe (median of 7 sequences); `l2_policy_ncu`
    # runs each sequence once, for Nsight Compute in application replay (DRAM bytes and L2 hits
    # per l2p_ kernel, in launch order: the printed rows name them).
    pol = [sec for sec in ("l2_policy", "l2_policy_ncu") if sec in sections]
    if pol:
        prd, pwr, idle = (mod.get_function(f) for f in ("l2p_read", "l2p_write", "idle_wait"))
        clock_kHz = dev.attributes["ClockRate"]
        for mib in [int(x) for x in os.environ.get("L2P_SIZES_MIB", "8,32,48").split(",")]:
            m = (mib << 20) // 16
            probe = (lambda m=m: prd(grid, block, (a, cp.uint64(m), out)))
            preps = {"read": probe, "write_read": lambda m=m: pwr(grid, block, (a, cp.uint64(m))),
                     "read_read": lambda m=m: prd(grid, block, (a, cp.uint64(m), out))}
            for fname, f in (("memset", flush), ("readflush", flush_clean)):
                for case, prep in preps.items():
                    for idle_us in ((0, 100) if case == "read" else (0,)):
                        def seq(f=f, prep=prep, case=case, idle_us=idle_us):
                            f()
                            if idle_us:
                                idle((1,), (1,), (cp.int64(idle_us * clock_kHz // 1000),))
                            if case != "read":
                                prep()
                        name = f"{fname}_{case}_idle{idle_us}us_{mib}MiB"
                        if "l2_policy_ncu" in pol:
                            seq()
                            probe()
                            cp.cuda.Device().synchronize()
                            print(f"# l2p sequence {name}: {'prep, ' if case != 'read' else ''}probe", flush=True)
                        else:
                            t = timed(probe, 7, seq)  # the sequence before each timed probe
                            row("l2_policy", name, t, "us", f"{(mib << 20) / t[0] / 1e3:.1f} GB/s")

    # Strided buffers read twice after a read-only flush (l2_stride_ncu, for Nsight Compute: the
    # second read's DRAM bytes say how much of it the L2 kept): 24 and 40 MiB of whole lines, 1 to
    # 1,024 lines apart. A set index that spreads contiguous lines evenly may or may not spread strides.
    if "l2_stride_ncu" in sections:
        srd = mod.get_function("l2p_read_strided")
        big = cp.ones((8 << 30) // 4, dtype=cp.uint32)
        for mib in (24, 40):
            lines = (mib << 20) // 128
            for stride in (1, 2, 4, 8, 16, 32, 64, 96, 128, 256, 512, 1024):
                if lines * stride * 128 > (8 << 30):
                    continue
                flush_clean()
                for _ in range(2):
                    srd(grid, block, (big, cp.uint64(lines), cp.uint64(stride), out))
                cp.cuda.Device().synchronize()
                print(f"# l2p sequence readflush_strided{stride}_read_read_idle0us_{mib}MiB: prep, probe", flush=True)
        del big

    # Random reads of whole pieces over 4 GiB (the 1 GiB `a` reused 4x is not enough: a new buffer).
    if "random" not in sections:
        return
    big = cp.ones((4 << 30) // 4, dtype=cp.uint32)
    for piece in (32, 64, 128, 256):
        p16 = piece // 16                               # 16 B a thread: 2 threads make a 32 B sector
        span = (4 << 30) // piece
        pieces = (256 << 20) // piece                   # 256 MiB read in all
        t = timed(lambda: rnd(grid, block, (big, cp.uint64(span), cp.int32(p16), cp.uint64(pieces), out)), 10, flush)
        row("random", f"{piece}B_pieces_4GiB", t, "us", f"{(256 << 20) / t[0] / 1e3:.1f} GB/s useful")


if __name__ == "__main__":
    main()
