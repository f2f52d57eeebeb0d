#!/usr/bin/env bash
# Installs, builds, then runs every test: ctest for C++ and pytest for Python.
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
exit $status
