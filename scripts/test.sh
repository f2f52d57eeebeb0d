#!/usr/bin/env bash
# Installs, builds, then runs every test: ctest for C++, pytest for Python, the fuzz smoke
# (scripts/fuzz.sh), then the C++ tests again under ASan + UBSan, less the long ones
# (scripts/sanitize.sh --ci: a second, sanitized build).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
BUILD=${INDEXSIM_BUILD_DIR:-build}
status=0
(cd "$BUILD" && ctest --output-on-failure -j "${JOBS:-$(nproc)}") || status=$?
if [ -d tests/python ] && ls tests/python/test_*.py >/dev/null 2>&1; then
  INDEXSIM_BUILD_DIR="$BUILD" PYTHONPATH="$PWD/analysis:$PWD/$BUILD/analysis${PYTHONPATH:+:$PYTHONPATH}" \
    python3 -m pytest -q tests/python || status=$?
fi
# The fuzz smoke: each libFuzzer target under ASan + UBSan for FUZZ_SECONDS (default 30).
bash scripts/fuzz.sh || status=$?
bash scripts/sanitize.sh --ci || status=$?
exit $status
