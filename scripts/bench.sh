#!/usr/bin/env bash
# Builds and runs the benchmark suites with the libtorch peer beside nnplug
# in the same process (Debian's libtorch-dev; a benchmark-only dependency),
# then W1's peak RSS, which needs one process per side, and W5's start-up.
# On a CPU with AVX-512, nnp_bench and W8 run a second time capped to AVX2
# (the paths an AMD Zen 3 or an Intel client core takes: nnplug with
# NNP_CPU_ISA=avx2, OpenBLAS and oneDNN capped by their own variables,
# libtorch with ATEN_CPU_CAPABILITY=avx2; ONNX Runtime cannot be capped), and
# the ratios are printed side by side at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh libtorch-dev
cmake --preset default >/dev/null   # re-configure so find_package(Torch) sees the peer
cmake --build --preset default
avx2_cap=(env NNP_CPU_ISA=avx2 ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell ATEN_CPU_CAPABILITY=avx2)
has_avx512=0
if grep -qw avx512f /proc/cpuinfo && [ -z "${NNP_CPU_ISA:-}" ]; then has_avx512=1; fi
full=$(mktemp) capped=$(mktemp)
trap 'rm -f "$full" "$capped"' EXIT
./build/bin/nnp_bench "$@" | tee "$full"
if [ "$has_avx512" = 1 ]; then
  echo
  echo "== again capped to AVX2 =="
  "${avx2_cap[@]}" ./build/bin/nnp_bench "$@" | tee "$capped"
fi
ours=$(./build/bin/nnp_w1_rss | awk '{print $(NF-1)}')
peer=$(./build/bin/torch_w1_rss | awk '{print $(NF-1)}')
awk -v a="$ours" -v b="$peer" 'BEGIN { printf "W1   peak RSS nnplug %d KB    libtorch %d KB    ratio %.3f  (target <= 0.2)\n", a, b, a / b }'
# W7 with each encoder layer checkpointed against without: the steps' memory,
# as tensors' peak bytes (max_memory_allocated, the target's measure) and as RSS.
plain=$(./build/bin/nnp_w7_checkpoint_memory plain)
checkpointed=$(./build/bin/nnp_w7_checkpoint_memory checkpointed)
awk -v p="$plain" -v c="$checkpointed" 'BEGIN {
  split(p, a, " "); split(c, b, " ")
  printf "W7   step memory checkpointed %d KB    plain %d KB    ratio %.3f  (tensors peak; target <= 0.6)\n", b[6], a[6], b[6] / a[6]
  printf "W7   step memory checkpointed %d KB    plain %d KB    ratio %.3f  (peak RSS, with the allocator cache)\n", b[9], a[9], b[9] / a[9] }'
# W5: start-up, `nnplug plugins` as whole processes with every plugin of the build present.
./build/bin/nnp_w5 ./build/bin/nnplug 21
# W8: nnplug against ONNX Runtime (node, tests/onnx_runtime) on the same files.
./build/bin/nnp_w8 tests/onnx_runtime | tee -a "$full"
if [ "$has_avx512" = 1 ]; then
  echo "W8   (nnplug capped to AVX2; ONNX Runtime uncapped: target <= 1.3)"
  "${avx2_cap[@]}" ./build/bin/nnp_w8 tests/onnx_runtime | tee -a "$capped"
fi
# W9: 2 ranks (DistributedDataParallel over gloo) against one process, and
# the gloo plugin's all-reduce against Gloo called directly.
if [ -x ./build/bin/nnp_w9 ]; then ./build/bin/nnp_w9; fi
# Both tiers' ratios side by side: each "ratio" line of the capped run
# against the full run's line for the same workload and figure.
if [ "$has_avx512" = 1 ]; then
  echo
  echo "ratios by tier (full = this CPU's AVX-512 paths; avx2 = capped, as an AVX2-only CPU runs them):"
  printf '%-64s %9s %9s\n' "figure" "full" "avx2"
  awk 'FNR == 1 { file++ }
       / ratio [0-9.]+/ {
         key = $0; sub(/ +ratio .*/, "", key)
         gsub(/ +[0-9]+(\.[0-9]+)? +(ns\/op|us\/step|us|GFLOP\/s)/, "", key); gsub(/ +/, " ", key)
         match($0, / ratio [0-9.]+/); r = substr($0, RSTART + 7, RLENGTH - 7)
         if (file == 1) full[key] = r; else if (key in full) printf "%-64s %9s %9s\n", substr(key, 1, 64), full[key], r
       }
       /^Peak [A-Z]/ { key = $2; match($0, /[0-9.]+ % of/); r = substr($0, RSTART, RLENGTH - 5) "%"
         if (file == 1) full["peak " key] = r; else if (("peak " key) in full) printf "%-64s %9s %9s\n", "share of peak " key, full["peak " key], r }' \
    "$full" "$capped"
fi
