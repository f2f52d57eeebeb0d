#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Nsight Compute's scheduler and warp-state sections (issue rate, eligible warps, stall reasons)
# and L2 atomic traffic for the attention-path kernels at batch 1 and 32 and a prefill chunk: why a
# warp waits ~10 cycles between instructions, and why top-k slows with many rows. One CSV per run
# in $OUT. Needs build-capture-deps (capture_on_gpu.sh --stage) carried.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
BIN=build-capture-deps/bin/indexsim-capture
DSV="--index-heads 64 --index-dim 128 --topk 2048 --attn-heads 128 --key-type fp8"
run() { name=$1; shift; timeout 120 $NCU --clock-control none --csv --page details --kernel-name-base function \
  --kernel-name 'regex:indexer|topk|sparse_attn' --launch-count 13 \
  --section SchedulerStats --section WarpStateStats \
  --metrics lts__t_requests_op_red.sum,lts__t_requests_op_atom.sum,lts__t_sectors_op_red.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed \
  "$BIN" --out /tmp/$name.itr --reps 1 --warmup 0 "$@" > $OUT/ncu_stalls_$name.csv 2>&1; echo "$name rc=$?"; }
run decode_65536_fp8kv_b1 --workload decode --context 65536 --batch 1 --kv-format fp8 $DSV
run decode_65536_fp8kv_b32 --workload decode --context 65536 --batch 32 --kv-format fp8 $DSV
run prefill_32k_chunk256 --workload prefill --context 32768 --chunk 256 $DSV
ls -la $OUT
