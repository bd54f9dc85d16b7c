#!/usr/bin/env bash
# Everything issue 6 asks of a machine with an NVIDIA GPU, in one run (device
# time is short): build, the GPU tests, the conformance kit on cuda, nnplug
# train --device cuda, and the G benchmarks. Figures go to $OUT when set.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build/gpu-checks}
mkdir -p "$out"
nvidia-smi -L | tee "$out/gpu.txt" || true
cmake --preset default -DNNP_BUILD_ROCM=OFF >/dev/null
cmake --build build -j "$(nproc)"
build/bin/nnplug devices | tee "$out/devices.txt"
build/bin/unit_tests --gtest_filter='GpuBackends*:DLPack*' 2>&1 | tee "$out/gpu_tests.txt"
build/bin/nnplug conformance --backend cuda 2>&1 | tee "$out/conformance_cuda.txt"
tests/integration/gpu_train.sh build/bin/nnplug cuda 2>&1 | tee "$out/train_cuda.txt"
build/bin/nnp_bench --benchmark_filter='^G' --benchmark_repetitions=3 2>&1 | tee "$out/bench_gpu.txt"
