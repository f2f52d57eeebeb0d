#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Nsight Compute counts (instructions, active cycles, DRAM bytes) of the attention-path kernels at
# several shapes, one CSV per shape in $OUT: the source of the warp-instruction counts in
# traces/kernel_geometry.hpp. Needs build-capture-deps (capture_on_gpu.sh --stage) carried.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
BIN=build-capture-deps/bin/indexsim-capture
DSV="--index-heads 64 --index-dim 128 --topk 2048 --attn-heads 128 --key-type fp8"
GLM="--index-heads 32 --index-dim 128 --topk 2048 --attn-heads 64 --key-type fp8"
run() { name=$1; shift; timeout 100 $NCU --clock-control none --csv --kernel-name-base function --kernel-name 'regex:indexer|topk|sparse_attn|pool|project' --launch-count 16 --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum,sm__cycles_active.avg,sm__cycles_active.max,smsp__warps_launched.sum "$BIN" --out /tmp/$name.itr --reps 1 --warmup 0 "$@" > $OUT/ncu_$name.csv 2>&1; echo "$name rc=$?"; }
run decode_1m --workload decode --context 1048576 $DSV --pool-ratio 4 --prune-dim 64
run decode_128k_fp8kv_b4 --workload decode --context 131072 --batch 4 --kv-format fp8 $DSV
run prefill_32k_chunk256 --workload prefill --context 32768 --chunk 256 $DSV
run decode_glm5_131072 --workload decode --context 131072 $GLM
run decode_dsv_4096 --workload decode --context 4096 $DSV
run prefill_dsv_16384_chunk64 --workload prefill --context 16384 --chunk 64 $DSV
ls -la $OUT
