#!/usr/bin/env bash
# Stages, in one folder, what scripts/gpu_checks.sh runs on a GPU machine that
# has the NVIDIA driver and CUDA libraries but none of Debian's (the lent
# machines: no Boost, OpenBLAS or GoogleTest there, and no way to install
# them). Builds here with the default preset, installs nnplug into the folder,
# builds the first-party plugins against that install (as a vendor would) and
# adds the test and benchmark programs and the non-CUDA shared libraries they
# need. The ROCm backend stays behind (no HIP runtime there), and so does the
# cpu backend's oneDNN library. The folder is also packed as FOLDER.tar.gz
# (about a third of its size: Debian's OpenBLAS alone is 35 MB), which fits
# what a device call carries.
#   bash scripts/gpu_bundle.sh [FOLDER]      (default .gpu, git-ignored)
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=$(realpath -m "${1:-.gpu}")
rm -rf "$bundle"
[ -f build/CMakeCache.txt ] || cmake --preset default
cmake --build build
cmake --install build --prefix "$bundle" >/dev/null
rm -f "$bundle"/lib/nnplug/plugins/libnnp_backend_rocm.so "$bundle"/lib/nnplug/devices/libnnp_backend_rocm_device.so
# The cpu backend's oneDNN library stays behind too (libdnnl alone is 40 MB of
# the carry's 64): there the cpu backend convolves by im2col, and says so.
rm -f "$bundle"/lib/nnplug/devices/libnnp_cpu_onednn.so
cmake -S plugins -B build/gpu-bundle-plugins -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$bundle" >/dev/null
cmake --build build/gpu-bundle-plugins
cmake --install build/gpu-bundle-plugins >/dev/null
cp build/bin/unit_tests build/bin/nnp_gpu_bench build/gpu-bundle-plugins/plugins_test "$bundle/bin/"
cp tests/integration/gpu_train.sh tests/integration/gpu_train_ranks.sh tools/bench/pytorch_cuda_peers.py "$bundle/bin/"
# Every library the programs and plugins need beyond glibc, libstdc++ and CUDA.
mkdir -p "$bundle/deps"
for file in "$bundle"/bin/* "$bundle"/lib/*.so* "$bundle"/lib/nnplug/plugins/*.so "$bundle"/lib/nnplug/devices/*.so; do
  [ -x "$file" ] || [[ $file == *.so* ]] || continue
  ldd "$file" 2>/dev/null | awk '$3 ~ /^\// {print $3}' || true
done | sort -u | while read -r lib; do
  case $(basename "$lib") in
    libc.so* | libm.so* | libstdc++* | libgcc_s* | libpthread* | libdl.so* | librt.so* | ld-linux*) ;;
    libcuda.so* | libcublas* | libnvidia* | libnnp.so*) ;;  # the driver and cuBLAS are there (too large to carry)
    *) cp -L "$lib" "$bundle/deps/" ;;
  esac
done
rm -rf "$bundle/include"
tar -czf "$bundle.tar.gz" -C "$(dirname "$bundle")" "$(basename "$bundle")"
du -sh "$bundle" "$bundle.tar.gz"
ls "$bundle/deps"
