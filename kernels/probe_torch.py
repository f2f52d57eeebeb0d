#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times library kernels on a lent GPU through PyTorch, as real measurements beside the captures.

Prints one tab-separated row per case (kind, shape, median/min/max us, derived rate), read later
into configs/validation/measured_h200.yaml by hand. Cases: the FP8 GEMM shapes of
configs/validation/published.yaml (DeepGEMM's on H800; here torch._scaled_mm, i.e. cuBLASLt, on
this GPU, per-tensor scales, BF16 out), the same shapes in BF16, and device-to-device copies from
1 MiB to 1 GiB (small ones show the launch and ramp cost). Every repetition is timed alone with
CUDA events after a 256 MiB write that flushes the L2, as the capture harness does.
Usage: python3 kernels/probe_torch.py [SECONDS]   (stops starting new cases after SECONDS)
       python3 kernels/probe_torch.py topk        (torch.topk of k = 2048 over rows of 32K-1M only)
"""
import statistics
import sys
import time

import torch

GEMMS = [(64, 2112, 7168), (64, 24576, 1536), (64, 32768, 512), (64, 7168, 16384),
         (64, 4096, 7168), (64, 7168, 2048), (128, 2112, 7168), (128, 24576, 1536),
         (128, 32768, 512), (128, 7168, 16384), (128, 4096, 7168), (128, 7168, 2048),
         (4096, 2112, 7168), (4096, 24576, 1536), (4096, 32768, 512), (4096, 7168, 16384),
         (4096, 4096, 7168), (4096, 7168, 2048)]
COPY_MIB = [1, 4, 16, 64, 256, 1024]
GATHER_ROW_BYTES = [64, 128, 256, 656, 1152]   # 656/1152: FlashMLA's FP8 and BF16 MLA rows
GATHER_TABLE_BYTES = 4 << 30                   # far beyond the L2: every row comes from DRAM
GATHER_BYTES = 256 << 20                       # bytes gathered per repetition


def timed(fn, reps, flush):
    for _ in range(3):
        fn()
    times = []
    for _ in range(reps):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)  # ms -> us
    return statistics.median(times), min(times), max(times)


def topk_cases(flush, gen, dev):
    """torch.topk (PyTorch's radix select) of k = 2048 over FP32 rows: what a library top-k costs
    beside the project's ten-launch one (traces/captured/*.itr)."""
    for rows in (1, 4, 32):
        for n in (32768, 131072, 1048576):
            x = torch.randn(rows, n, device=dev, generator=gen)
            med, lo, hi = timed(lambda: torch.topk(x, 2048, dim=1, sorted=True), 20, flush)
            print(f"topk_torch\t{rows}x{n}_k2048\t{med:.2f}\t{lo:.2f}\t{hi:.2f}\t-")
            sys.stdout.flush()


def main():
    budget_s = float(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1] != "topk" else 90.0
    t0 = time.time()
    dev = torch.device("cuda")
    print("# probe_torch: torch", torch.__version__, "device", torch.cuda.get_device_name(0))
    print("#\tkind\tshape\tmedian_us\tmin_us\tmax_us\trate")
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    gen = torch.Generator(device=dev).manual_seed(1)
    if len(sys.argv) > 1 and sys.argv[1] == "topk":  # python3 kernels/probe_torch.py topk
        topk_cases(flush, gen, dev)
        return
    for dtype in ("fp8", "bf16"):
        for m, n, k in GEMMS:
            if time.time() - t0 > budget_s:
                print("# out of time"); return
            try:
                a = torch.randn(m, k, device=dev, generator=gen)
                b = torch.randn(n, k, device=dev, generator=gen)
                if dtype == "fp8":
                    a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
                    one = torch.ones((), device=dev, dtype=torch.float32)
                    fn = lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one,
                                                  out_dtype=torch.bfloat16)
                else:
                    ab, bb = a.to(torch.bfloat16), b.to(torch.bfloat16)
                    fn = lambda: torch.mm(ab, bb.t())
                med, lo, hi = timed(fn, 20, flush)
                print(f"gemm_{dtype}\t{m}x{n}x{k}\t{med:.2f}\t{lo:.2f}\t{hi:.2f}\t"
                      f"{2.0 * m * n * k / med / 1e6:.1f} TFLOP/s")
            except Exception as e:  # one case failing must not cost the others
                print(f"# gemm_{dtype} {m}x{n}x{k} failed: {e}")
            sys.stdout.flush()
    for mib in COPY_MIB:
        if time.time() - t0 > budget_s:
            print("# out of time"); return
        src = torch.empty(mib << 20, dtype=torch.uint8, device=dev)
        dst = torch.empty_like(src)
        med, lo, hi = timed(lambda: dst.copy_(src), 20, flush)
        print(f"copy\t{mib}MiB\t{med:.2f}\t{lo:.2f}\t{hi:.2f}\t{2.0 * (mib << 20) / med / 1e3:.1f} GB/s")
        sys.stdout.flush()
    # The smallest kernel: one element, so the time is launch, ramp and event overhead alone.
    tiny = torch.zeros(1, device=dev)
    med, lo, hi = timed(lambda: tiny.add_(1.0), 50, flush)
    print(f"tiny_kernel\t1x4B\t{med:.2f}\t{lo:.2f}\t{hi:.2f}\t-")
    # Back-to-back launches, one event pair around N of them: the per-kernel cost of a stream of
    # dependent kernels (the simulator's gpu.kernel_launch_ns), launched from the host and replayed
    # from a CUDA graph.
    n = 200
    def burst():
        for _ in range(n):
            tiny.add_(1.0)
    med, lo, hi = timed(burst, 10, flush)
    print(f"launch_gap_stream\t{n}_tiny\t{med / n:.3f}\t{lo / n:.3f}\t{hi / n:.3f}\tus per kernel")
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            burst()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            burst()
        med, lo, hi = timed(graph.replay, 10, flush)
        print(f"launch_gap_graph\t{n}_tiny\t{med / n:.3f}\t{lo / n:.3f}\t{hi / n:.3f}\tus per kernel")
    except Exception as e:
        print(f"# graph failed: {e}")
    # Row gathers at random (uniform) rows of a table in DRAM: index_select, rows read and written.
    for row in GATHER_ROW_BYTES:
        if time.time() - t0 > budget_s:
            print("# out of time"); return
        try:
            table = torch.empty(GATHER_TABLE_BYTES // row, row, dtype=torch.uint8, device=dev)
            idx = torch.randint(0, table.shape[0], (GATHER_BYTES // row,), device=dev, generator=gen)
            med, lo, hi = timed(lambda: torch.index_select(table, 0, idx), 20, flush)
            print(f"gather\t{row}B_rows_x{idx.numel()}\t{med:.2f}\t{lo:.2f}\t{hi:.2f}\t"
                  f"{GATHER_BYTES / med / 1e3:.1f} GB/s gathered")
            del table, idx
        except Exception as e:
            print(f"# gather {row} failed: {e}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
