#!/usr/bin/env bash
# Installs everything IndexSim needs on a fresh Debian machine, then builds. Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

DEB_PACKAGES=(build-essential cmake ninja-build pkg-config git
  libsystemc-dev libboost-graph-dev libsqlite3-dev libyaml-cpp-dev nlohmann-json3-dev zlib1g-dev libcli11-dev
  libgtest-dev libbenchmark-dev pybind11-dev python3-dev python3-pip python3-venv
  clang libclang-rt-dev)   # clang + libFuzzer: the fuzz targets (scripts/fuzz.sh)
missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

PY=${PYTHON:-python3}
"$PY" -m pip install -q --disable-pip-version-check -r scripts/requirements.txt

BUILD=${INDEXSIM_BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
# nvcc (CUDA 13) lives in /usr/local/cuda on these machines; CMake finds it through CUDACXX.
if [ -z "${CUDACXX:-}" ] && [ -x /usr/local/cuda/bin/nvcc ]; then export CUDACXX=/usr/local/cuda/bin/nvcc; fi
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DINDEXSIM_BUILD_PYTHON=ON >/dev/null
cmake --build "$BUILD" -j "$JOBS"
echo "setup: built into $BUILD/"
