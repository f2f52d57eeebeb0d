#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Does the L2 state the capture leaves before each repetition move the measured times? The
# harness flushes the L2 with a 256 MiB memset (--flush-mode write), which leaves the L2 full of
# dirty lines that the step's misses must write back; --flush-mode read leaves it full of clean
# ones. Captures the copies and two decode steps both ways. Writes $OUT/flush.tar.gz (traces and
# summary.tsv, a `flush` column added) and $OUT/flush.log.
# Run after capture_on_gpu.sh --stage, with build-capture-deps carried:
#   bash kernels/capture_flush_on_gpu.sh [OUTDIR]
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUTDIR=${1:-${OUT:-$ROOT/capture-out}}
WORK=$(mktemp -d)
mkdir -p "$OUTDIR" "$WORK/flush"
LOG=$OUTDIR/flush.log
START=$(date +%s)
BUDGET_S=${CAPTURE_BUDGET_S:-240}
source "$ROOT/kernels/staged_env.sh"  # log, left, the CUDA paths, BIN

status=0
capture() {  # name, flush mode, seconds allowed, args...
  local name=$1 mode=$2 limit=$3; shift 3
  if [ "$(left)" -lt 15 ]; then log "SKIPPED $name $mode: out of time"; status=1; return; fi
  [ "$limit" -gt "$(left)" ] && limit=$(left)
  log "capture $name flush=$mode"
  timeout "$limit" "$BIN/indexsim-capture" --out "$WORK/flush/${name}_flush${mode}.itr" \
    --summary "$WORK/flush/summary_$mode.tsv" --flush-mode "$mode" "$@" >>"$LOG" 2>&1 ||
    { log "FAILED: capture $name $mode"; status=1; }
}
DSV=(--index-heads 64 --index-dim 128 --topk 2048 --attn-heads 128 --key-type fp8)
# Interleaved, so that drift of the machine shows in both modes alike.
for mib in 4 32 256; do
  for mode in write read; do capture "copy_${mib}MiB" $mode 30 --workload copy --bytes $((mib << 20)) --reps 20; done
done
for ctx in 32768 131072; do
  for mode in write read; do capture "decode_dsv_${ctx}" $mode 40 --workload decode --context $ctx "${DSV[@]}" --reps 20; done
done
(cd "$WORK/flush" && tar -czf "$OUTDIR/flush.tar.gz" *.itr summary_*.tsv) || { log "FAILED: archive"; status=1; }
for mode in write read; do
  echo "## flush-mode $mode" >>"$LOG"
  { column -t -s $'\t' "$WORK/flush/summary_$mode.tsv" 2>/dev/null || cat "$WORK/flush/summary_$mode.tsv"; } >>"$LOG"
done
log "done, status $status"
exit $status
