#!/usr/bin/env bash
# Builds and runs the benchmark suites with the libtorch peer beside nnplug
# in the same process (Debian's libtorch-dev; a benchmark-only dependency).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh libtorch-dev
cmake --preset default >/dev/null   # re-configure so find_package(Torch) sees the peer
cmake --build --preset default
./build/bin/nnp_bench "$@"
