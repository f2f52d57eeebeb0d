#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Nsight Compute on the copy and read kernels (DRAM and L2 bytes, duration) at 4 MiB, 32 MiB and
# 512 MiB, with caches as the capture leaves them (--cache-control none: the capture's own 256 MiB
# flush precedes each kernel), and on the pooling and projection kernels at a second context, one
# CSV per run in $OUT. Needs build-capture-deps (capture_on_gpu.sh --stage) carried.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
BIN=build-capture-deps/bin/indexsim-capture
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_read_lookup_hit.sum,smsp__inst_executed.sum,sm__cycles_active.avg
for mib in 4 32 512; do
  timeout 100 $NCU --clock-control none --cache-control none --csv --kernel-name-base function \
    --kernel-name 'regex:copy|read' --launch-count 4 --metrics $M \
    $BIN --out /tmp/c$mib.itr --workload copy --bytes $((mib << 20)) --reps 1 --warmup 1 > $OUT/ncu_copy_${mib}MiB.csv 2>&1
  echo "copy $mib rc=$?"
done
timeout 100 $NCU --clock-control none --csv --kernel-name-base function --kernel-name 'regex:pool|project' \
  --launch-count 2 --metrics $M $BIN --out /tmp/p.itr --workload decode --context 262144 \
  --index-heads 64 --index-dim 128 --topk 2048 --attn-heads 128 --key-type fp8 --pool-ratio 4 --prune-dim 64 \
  --reps 1 --warmup 0 > $OUT/ncu_pool_project_256k.csv 2>&1
echo "pool rc=$?"
ls -la $OUT
