#!/usr/bin/env bash
# Everything the GPU issue asks of a machine with an NVIDIA GPU, in one run
# (device time is short): the GPU unit tests (the nccl plugin's collectives
# for every dtype among them, and W1 under f16 and bf16 autocast against
# f32), the nccl plugin's failure paths (a timeout
# that aborts the communicator) in a process of their own, the RMSNorm
# plugin's CUDA kernels, the conformance kit on cuda against reference
# (its autocast family: the 16-bit products and an MLP under autocast),
# nnplug train --device cuda (alone, and one rank over nccl against one
# process) with the checkpoint evaluated there compiled and eager, graph
# mode's W1/W3/W7 on cuda against eager (in the unit tests), and G1-G4 with
# their peers (PyTorch's where python3 has torch for CUDA).
# Every step runs even when one before it fails; a table ends the output and
# the logs go to $OUT (default build/gpu-checks).
#   bash scripts/gpu_checks.sh BUNDLE   programs staged by scripts/gpu_bundle.sh
#                                       (a GPU machine without Debian's libraries):
#                                       its folder, or the folder packed (.tar.gz)
#   bash scripts/gpu_checks.sh          builds here first (a full dev machine)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build/gpu-checks}
mkdir -p "$out"
if [ $# -ge 1 ]; then
  prefix=$(realpath "$1")
  if [[ $prefix == *.tar.gz ]]; then
    unpacked=$(mktemp -d)
    trap 'rm -rf "$unpacked"' EXIT
    tar -xzf "$prefix" -C "$unpacked" || exit 1
    prefix=$unpacked/$(basename "$prefix" .tar.gz)
  fi
  bin=$prefix/bin
  plugins_test=$bin/plugins_test
  train_script=$bin/gpu_train.sh
  ranks_script=$bin/gpu_train_ranks.sh
  peers_script=$bin/pytorch_cuda_peers.py
  # cuBLAS comes from the machine: the toolkit's folder or PyTorch's wheels.
  cuda_libs=$(find /usr/local /usr/lib /opt -xdev \( -name 'libcublasLt.so.13' -o -name 'libnccl.so.2' \) -printf '%h\n' \
    2>/dev/null | sort -u | paste -sd:)
  export LD_LIBRARY_PATH=$prefix/lib:$prefix/deps:$cuda_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  cmake --preset default -DNNP_BUILD_ROCM=OFF >/dev/null && cmake --build build -j "$(nproc)" || exit 1
  bin=build/bin
  plugins_test=
  train_script=tests/integration/gpu_train.sh
  ranks_script=tests/integration/gpu_train_ranks.sh
  peers_script=tools/bench/pytorch_cuda_peers.py
fi
unset NNP_PLUGIN_PATH

declare -a names results
step() {  # step NAME LOGFILE COMMAND... (each bounded: a hang costs one step, not the lease)
  local name=$1 log=$out/$2
  shift 2
  echo "=== $name: $*"
  local start=$SECONDS
  timeout "${STEP_TIMEOUT:-240}" "$@" >"$log" 2>&1
  local rc=$?
  tail -n 40 "$log"
  names+=("$name")
  results+=("exit $rc, $((SECONDS - start)) s")
}

{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  nvidia-smi -L
  echo "cuBLAS from: ${cuda_libs:-the run path of the build}"
} >"$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
step "nnplug devices" devices.txt "$bin/nnplug" devices
step "GPU unit tests" gpu_tests.txt "$bin/unit_tests" --gtest_filter='GpuBackends*:DLPack*:NcclBackend*:Nccl.*'
# They leave an aborted communicator behind: a process of their own.
step "nccl failure paths" nccl_failure.txt "$bin/unit_tests" --gtest_filter='NcclFailure.*'
[ -n "$plugins_test" ] && step "RMSNorm plugin (CUDA kernels)" plugins_test.txt "$plugins_test"
step "conformance kit on cuda" conformance_cuda.txt "$bin/nnplug" conformance --backend cuda
step "nnplug train, eval, bench on cuda" train_cuda.txt "$train_script" "$bin/nnplug" cuda
# One rank training through the nccl plugin (DistributedDataParallel on
# cuda:0), against one process on the same seed.
step "nnplug train over nccl = alone" train_nccl.txt "$ranks_script" "$bin/nnplug"
step "G1-G4 (nnp_gpu_bench)" bench_gpu.txt "$bin/nnp_gpu_bench" --benchmark_filter='^G' --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true
if python3 -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
  step "G1, G4 peers: PyTorch on cuda" pytorch_peers.txt python3 "$peers_script"
fi

echo
echo "=== summary"
for i in "${!names[@]}"; do printf '%-40s %s\n' "${names[$i]}" "${results[$i]}"; done
grep -h "^G[0-9]" "$out/bench_gpu.txt" "$out/pytorch_peers.txt" 2>/dev/null
