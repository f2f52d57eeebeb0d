# SPDX-License-Identifier: Apache-2.0
# Sourced by the GPU scripts that run the staged binaries (capture_sweep_on_gpu.sh,
# capture_flush_on_gpu.sh) after they set ROOT, LOG, START and BUDGET_S: log() and left() (seconds
# of the budget left), the CUDA libraries on the paths, BIN (build-capture-deps/bin, checked) and the
# GPU's name and clocks in the log.
log() { echo "[$(($(date +%s) - START))s] $*" | tee -a "$LOG"; }
left() { echo $((BUDGET_S - ($(date +%s) - START))); }
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
done
export LD_LIBRARY_PATH PATH=/usr/local/cuda/bin:$PATH
BIN=$ROOT/build-capture-deps/bin
if [ ! -x "$BIN/indexsim-capture" ]; then
  log "FAILED: no staged indexsim-capture (run capture_on_gpu.sh --stage here first)"; exit 1
fi
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv 2>&1 || true; } >>"$LOG"
