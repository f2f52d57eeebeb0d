#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks the CUDA kernels against their CPU references and captures a set of traces, on a lent GPU
# machine, within 8 minutes. Writes at most 8 files to the output folder (the device tool's limit):
# six .itr traces, summary.tsv (one row per kernel) and capture.log (build, tests, captures).
#
#   here, once:      kernels/capture_on_gpu.sh --stage [BUILD_DIR]   (default build-kernels; a
#                    standalone `cmake -S kernels` build folder works too)
#                    copies the binaries built here and the headers/sources a build there would
#                    need into build-capture-deps/ (ignored by git; name it in the tool's `carry`)
#   on the GPU:      bash kernels/capture_on_gpu.sh [OUTDIR]          (default $OUT, else capture-out)
#
# On the GPU machine it uses build-capture-deps/bin/ when those binaries run there, else builds
# kernels/ standalone (nvcc, cmake, cuBLAS; SystemC and yaml-cpp are not needed). Without a GPU it
# builds, runs the GPU tests (which skip), and stops with exit status 3 before capturing.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DEPS=$ROOT/build-capture-deps

if [ "${1:-}" = "--stage" ]; then
  BUILD=${2:-build-kernels}
  rm -rf "$DEPS" && mkdir -p "$DEPS/bin" "$DEPS/include"
  for b in indexsim-capture indexsim_kernels_gpu_tests; do  # whole-project or standalone build layout
    if [ -x "$BUILD/kernels/$b" ]; then cp "$BUILD/kernels/$b" "$DEPS/bin/"
    elif [ -x "$BUILD/$b" ]; then cp "$BUILD/$b" "$DEPS/bin/"
    else echo "stage: $b is not built in $BUILD" >&2; fi
  done
  [ -d /usr/include/nlohmann ] && cp -r /usr/include/nlohmann "$DEPS/include/"
  for h in zlib.h zconf.h; do [ -f /usr/include/$h ] && cp /usr/include/$h "$DEPS/include/"; done
  [ -d /usr/src/googletest ] && cp -r /usr/src/googletest "$DEPS/googletest"
  du -sh "$DEPS"
  echo "stage: done; carry build-capture-deps when calling the device tool"
  exit 0
fi

OUTDIR=${1:-${OUT:-$ROOT/capture-out}}
mkdir -p "$OUTDIR"
LOG=$OUTDIR/capture.log
SUMMARY=$OUTDIR/summary.tsv
rm -f "$SUMMARY"
START=$(date +%s)
BUDGET_S=${CAPTURE_BUDGET_S:-470}   # the whole script must end within 8 minutes
log() { echo "[$(($(date +%s) - START))s] $*" | tee -a "$LOG"; }
left() { echo $((BUDGET_S - ($(date +%s) - START))); }

# cuBLAS: the toolkit's, or the one PyTorch's wheels bring.
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
done
if ! ldconfig -p 2>/dev/null | grep -q libcublas.so.13 && [ ! -e /usr/local/cuda/lib64/libcublas.so.13 ]; then
  for sp in $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null); do
    lib=$(find "$sp/nvidia" -maxdepth 4 -name 'libcublas.so.13' 2>/dev/null | head -1)
    [ -n "$lib" ] && { LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$lib")"; break; }
  done
fi
export LD_LIBRARY_PATH
export PATH=/usr/local/cuda/bin:$PATH

log "capture_on_gpu: output in $OUTDIR"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv 2>&1 || true; } >>"$LOG"

BIN=""
if [ -x "$DEPS/bin/indexsim-capture" ] && [ -x "$DEPS/bin/indexsim_kernels_gpu_tests" ] &&
   "$DEPS/bin/indexsim_kernels_gpu_tests" --gtest_list_tests >/dev/null 2>>"$LOG"; then
  BIN=$DEPS/bin
  log "using prebuilt binaries from build-capture-deps/bin"
else
  BUILD=$ROOT/build-capture
  log "building kernels/ standalone into $BUILD"
  ARGS=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$(command -v nvcc)")
  [ -d "$DEPS/include" ] && ARGS+=(-DINDEXSIM_EXTRA_INCLUDE_DIR="$DEPS/include")
  [ -d "$DEPS/googletest" ] && ARGS+=(-DINDEXSIM_GTEST_SOURCE_DIR="$DEPS/googletest")
  GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
  if ! cmake -S kernels -B "$BUILD" "${GEN[@]}" "${ARGS[@]}" >>"$LOG" 2>&1 ||
     ! cmake --build "$BUILD" -j "$(nproc)" --target indexsim-capture indexsim_kernels_gpu_tests >>"$LOG" 2>&1; then
    log "FAILED: build (see $LOG)"
    tail -30 "$LOG"
    exit 1
  fi
  BIN=$BUILD
  log "built"
fi

status=0
log "GPU tests: every kernel against its CPU reference"
timeout 150 "$BIN/indexsim_kernels_gpu_tests" --gtest_color=no >>"$LOG" 2>&1 || { status=1; log "FAILED: GPU tests (see $LOG)"; }
grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) *\]" "$LOG" | tail -25
if ! nvidia-smi -L 2>/dev/null | grep -q "^GPU"; then
  log "no GPU on this machine (nvidia-smi -L lists none): nothing to capture, exit 3"
  exit 3
fi

# Shapes: DeepSeek-V3.2 (../shared/reference/workloads.md: index_n_heads 64, index_head_dim 128,
# index_topk 2048, n_heads 128, MLA rows of 512 latent + 64 rope), FP8 indexer keys.
SHAPE=(--index-heads 64 --index-dim 128 --topk 2048 --attn-heads 128 --key-type fp8)
capture() {  # name, seconds allowed, args...
  local name=$1 limit=$2; shift 2
  if [ "$(left)" -lt 20 ]; then log "SKIPPED $name: out of time"; status=1; return; fi
  [ "$limit" -gt "$(left)" ] && limit=$(left)
  log "capture $name"
  if ! timeout "$limit" "$BIN/indexsim-capture" --out "$OUTDIR/$name.itr" --summary "$SUMMARY" "$@" >>"$LOG" 2>&1; then
    log "FAILED: capture $name"; status=1
  fi
}
capture decode_32k 60 --workload decode --context 32768 "${SHAPE[@]}"
capture decode_128k_fp8kv_b4 60 --workload decode --context 131072 --batch 4 --kv-format fp8 "${SHAPE[@]}"
capture decode_1m 90 --workload decode --context 1048576 "${SHAPE[@]}" --pool-ratio 4 --prune-dim 64 --reps 30
capture prefill_32k_chunk256 90 --workload prefill --context 32768 --chunk 256 "${SHAPE[@]}" --reps 20
capture copy_512MiB 40 --workload copy --bytes 536870912 --reps 30
capture gemm_8192_bf16 60 --workload gemm --mnk 8192,8192,8192 --reps 20

if [ -f "$SUMMARY" ]; then
  echo
  { column -t -s $'\t' "$SUMMARY" 2>/dev/null || cat "$SUMMARY"; } | sed "s#$OUTDIR/##" | tee -a "$LOG"
fi
log "done, status $status"
ls -la "$OUTDIR" | tee -a "$LOG"
exit $status
