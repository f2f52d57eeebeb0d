#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A wider capture than capture_on_gpu.sh, for validating the model across shapes: decode over
# contexts and batches, prefill chunks, copies of several sizes, GLM-5's indexer shape, and
# PyTorch's library kernels (kernels/probe_torch.py). The device tool returns at most 8 files, so
# the decode traces travel as $OUT/sweep_decode.tar.gz, the prefill ones as they are, the rest as
# $OUT/sweep_other.tar.gz (with summary.tsv and probe_torch.tsv), and $OUT/sweep.log.
# Run after capture_on_gpu.sh --stage, with build-capture-deps carried:
#   bash kernels/capture_sweep_on_gpu.sh [OUTDIR]
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUTDIR=${1:-${OUT:-$ROOT/capture-out}}
WORK=$(mktemp -d)
mkdir -p "$OUTDIR" "$WORK/sweep"
LOG=$OUTDIR/sweep.log
SUMMARY=$WORK/sweep/summary.tsv
START=$(date +%s)
BUDGET_S=${CAPTURE_BUDGET_S:-300}
source "$ROOT/kernels/staged_env.sh"  # log, left, the CUDA paths, BIN

status=0
capture() {  # name, seconds allowed, args...
  local name=$1 limit=$2; shift 2
  if [ "$(left)" -lt 15 ]; then log "SKIPPED $name: out of time"; status=1; return; fi
  [ "$limit" -gt "$(left)" ] && limit=$(left)
  log "capture $name"
  timeout "$limit" "$BIN/indexsim-capture" --out "$WORK/sweep/$name.itr" --summary "$SUMMARY" "$@" >>"$LOG" 2>&1 ||
    { log "FAILED: capture $name"; status=1; }
}
# DeepSeek-V3.2 and GLM-5 shapes (../shared/reference/workloads.md); FP8 indexer keys.
DSV=(--index-heads 64 --index-dim 128 --topk 2048 --attn-heads 128 --key-type fp8)
GLM=(--index-heads 32 --index-dim 128 --topk 2048 --attn-heads 64 --key-type fp8)
# capture_on_gpu.sh's attention shapes again, under their names there (same harness).
capture decode_32k 30 --workload decode --context 32768 "${DSV[@]}"
capture decode_128k_fp8kv_b4 30 --workload decode --context 131072 --batch 4 --kv-format fp8 "${DSV[@]}"
capture decode_1m 60 --workload decode --context 1048576 "${DSV[@]}" --pool-ratio 4 --prune-dim 64 --reps 30
capture prefill_32k_chunk256 60 --workload prefill --context 32768 --chunk 256 "${DSV[@]}" --reps 20
for ctx in 4096 8192 16384 65536 131072 262144 524288; do
  capture "decode_dsv_${ctx}" 30 --workload decode --context $ctx "${DSV[@]}"
done
for b in 1 2 8 16 32; do
  capture "decode_dsv_65536_fp8kv_b${b}" 30 --workload decode --context 65536 --batch $b --kv-format fp8 "${DSV[@]}"
done
for ctx in 131072 1048576; do
  capture "decode_glm5_${ctx}" 30 --workload decode --context $ctx "${GLM[@]}"
done
capture prefill_dsv_16384_chunk64 30 --workload prefill --context 16384 --chunk 64 "${DSV[@]}"
capture prefill_dsv_65536_chunk512 40 --workload prefill --context 65536 --chunk 512 "${DSV[@]}" --reps 10
capture prefill_glm5_131072_chunk256 40 --workload prefill --context 131072 --chunk 256 "${GLM[@]}" --reps 10
for mib in 4 32 256 2048; do
  capture "copy_${mib}MiB" 30 --workload copy --bytes $((mib << 20)) --reps 20
done
capture gemm_4096_bf16 30 --workload gemm --mnk 4096,4096,4096 --reps 20
capture gemm_128x7168x2048_bf16 30 --workload gemm --mnk 128,7168,2048 --reps 20

log "PyTorch library kernels"
timeout 90 python3 kernels/probe_torch.py 70 >>"$WORK/sweep/probe_torch.tsv" 2>>"$LOG" || { log "FAILED: probe"; status=1; }
# Nsight Compute on one decode step: DRAM bytes, L2 sectors, instructions and active cycles per
# kernel, for checking the traffic and work the traces declare (one profiled run, no repetitions).
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ] && [ "$(left)" -gt 40 ]; then
  log "ncu on decode_32k"
  timeout 90 "$NCU" --clock-control none --csv --kernel-name-base function \
    --kernel-name 'regex:indexer|topk|sparse_attn|pool|project|copy_kernel|read_kernel' \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_atom.sum,lts__t_sectors_op_red.sum,smsp__inst_executed.sum,sm__cycles_active.avg,sm__warps_active.avg.pct_of_peak_sustained_active \
    "$BIN/indexsim-capture" --out "$WORK/ncu.itr" --workload decode --context 32768 "${DSV[@]}" --reps 1 --warmup 0 \
    >"$WORK/sweep/ncu_decode_32k.csv" 2>>"$LOG" || { log "FAILED: ncu"; status=1; }
fi
# Archives keep the file count under the tool's 8 and each file under 16 MiB: the decode traces
# in one, the four prefill traces as they are, the rest with summary.tsv and probe_torch.tsv.
(cd "$WORK/sweep" && tar -czf "$OUTDIR/sweep_decode.tar.gz" decode_*.itr && cp prefill_*.itr "$OUTDIR/" &&
  tar -czf "$OUTDIR/sweep_other.tar.gz" copy_*.itr gemm_*.itr summary.tsv probe_torch.tsv $(ls ncu_*.csv 2>/dev/null)) ||
  { log "FAILED: archive"; status=1; }
{ column -t -s $'\t' "$SUMMARY" 2>/dev/null || cat "$SUMMARY"; } >>"$LOG"
cat "$WORK/sweep/probe_torch.tsv" >>"$LOG"
log "done, status $status"
ls -la "$OUTDIR" "$WORK/sweep" | tee -a "$LOG"
exit $status
