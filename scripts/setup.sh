#!/usr/bin/env bash
# Installs the Debian packages Moreau needs and builds it in Release.
# Idempotent; run as root on a fresh Debian 12 machine.
#   scripts/setup.sh [BUILD_DIR] [extra cmake args...]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
shift || true

packages=(
  build-essential cmake ninja-build pkg-config
  libeigen3-dev           # dense/sparse linear algebra (Eigen 3.4)
  libsuitesparse-dev      # CHOLMOD sparse Cholesky
  libopenblas0-serial     # BLAS/LAPACK under CHOLMOD's supernodes (serial: one thread per run, deterministic)
  libboost-test-dev       # unit tests (Boost.Test)
  nlohmann-json3-dev      # scene files and results.json
  libcli11-dev            # command-line parsing of `moreau`
  libhdf5-dev             # FCLIB problem files (HDF5)
  python3-matplotlib python3-numpy   # figures of the report (scripts/)
  python3-h5py python3-scipy         # independent FCLIB merit check (scripts/fclib_independent_merit.py)
  python3-cvxopt          # independent conic QP solver (coneqp) the interior point tests compare to
  pybind11-dev python3-dev   # the Python module moreau (python/): pybind11 and Python.h; skipped when absent
  python3-pytest          # runs the module's tests (ctest label python)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build" --parallel "$(nproc)"
