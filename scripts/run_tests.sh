#!/usr/bin/env bash
# Sets up, builds and runs the quick test suite (unit tests and quick-scale experiments).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/setup.sh" "$here/build"
cd "$here/build"
ctest -L quick --output-on-failure --parallel "$(nproc)"
