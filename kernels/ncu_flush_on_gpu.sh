#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Nsight Compute on the 32 MiB and 256 MiB copies and the reads after them, after either L2 flush
# (indexsim-capture --flush-mode write|read), in application replay with the caches left alone
# (--replay-mode application --cache-control none): each metric pass reruns the whole capture, so
# every kernel finds the L2 as the capture's own flush and kernels left it, which kernel replay's
# save and restore of memory would disturb. DRAM bytes read and written and L2 read hits per kernel;
# one CSV per run in $OUT. Needs build-capture-deps (capture_on_gpu.sh --stage) carried.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
BIN=build-capture-deps/bin/indexsim-capture
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum,lts__t_sectors_op_write.sum
for mib in 32 256; do
  for mode in write read; do
    timeout 120 $NCU --clock-control none --cache-control none --replay-mode application --csv \
      --kernel-name-base function --kernel-name 'regex:copy_kernel|read_kernel' --metrics $M \
      $BIN --out /tmp/f$mib$mode.itr --workload copy --bytes $((mib << 20)) --reps 1 --warmup 0 --flush-mode $mode \
      > $OUT/ncu_flush${mode}_copy_${mib}MiB.csv 2>&1
    echo "copy $mib $mode rc=$?"
  done
done
ls -la $OUT
