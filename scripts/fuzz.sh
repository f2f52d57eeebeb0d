#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/: clang, AddressSanitizer + UndefinedBehaviorSanitizer) and
# runs each for FUZZ_SECONDS (default 30) from its committed corpus, beside the parsers' GoogleTest
# tests built from the same sanitized objects (ctest label sanitize): the fuzz smoke of
# scripts/test.sh. Longer: FUZZ_SECONDS=900 bash scripts/fuzz.sh (docs/robustness.md).
# Needs clang and libFuzzer (scripts/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${INDEXSIM_FUZZ_BUILD_DIR:-build-fuzz}
CXX=${FUZZ_CXX:-clang++} cmake -S fuzz -B "$BUILD" -G Ninja -DFUZZ_SECONDS="${FUZZ_SECONDS:-30}" >/dev/null
cmake --build "$BUILD" -j "${JOBS:-$(nproc)}"
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
(cd "$BUILD" && ctest -L "^(fuzz|sanitize)$" --output-on-failure -j "${JOBS:-$(nproc)}")
