#!/usr/bin/env bash
# Installs the Debian 12 packages nnplug builds with, only those missing.
# Idempotent: a second run installs nothing and needs no network.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config ccache
  libboost-dev libboost-program-options-dev
  libopenblas-dev
  libdnnl-dev
  zlib1g-dev
  libssl-dev
  abigail-tools python3
  iproute2
  nlohmann-json3-dev libdlpack-dev
  libonnx-dev libprotobuf-dev libonnx-testdata
  libgloo-dev
  hipcc libamdhip64-dev
  clang-15
  libgtest-dev libgmock-dev libbenchmark-dev
  # The model corpus's exporter (tests/model_corpus/make_corpus.py): Debian's
  # PyTorch, torchvision and onnx write the ONNX files compared with ONNX Runtime.
  python3-torch python3-torchvision python3-onnx python3-numpy
)
# Extra packages a caller asks for (scripts/bench.sh adds the libtorch peer).
packages+=("$@")

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# ONNX Runtime (npm onnxruntime-node, CPU), the outside client that runs the
# ONNX files nnplug exports in the tests. Its install script would fetch CUDA
# pieces; the CPU library ships in the package, so scripts are skipped. Without
# npm or the registry the ONNX Runtime tests say so and skip.
client="$(cd "$(dirname "$0")/.." && pwd)/tests/onnx_runtime"
if [ ! -f "$client/node_modules/onnxruntime-node/package.json" ]; then
  if command -v npm > /dev/null; then
    (cd "$client" && ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm ci --no-audit --no-fund --ignore-scripts) ||
      echo "setup: onnxruntime-node could not be installed; the ONNX Runtime comparisons will be skipped"
  else
    echo "setup: npm not found; the ONNX Runtime comparisons will be skipped"
  fi
fi
