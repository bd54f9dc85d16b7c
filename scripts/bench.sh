#!/usr/bin/env bash
# Builds and runs the benchmark suites with the libtorch peer beside nnplug
# in the same process (Debian's libtorch-dev; a benchmark-only dependency),
# then W1's peak RSS, which needs one process per side, and W5's start-up.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh libtorch-dev
cmake --preset default >/dev/null   # re-configure so find_package(Torch) sees the peer
cmake --build --preset default
./build/bin/nnp_bench "$@"
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
./build/bin/nnp_w8 tests/onnx_runtime
# W9: 2 ranks (DistributedDataParallel over gloo) against one process, and
# the gloo plugin's all-reduce against Gloo called directly.
if [ -x ./build/bin/nnp_w9 ]; then ./build/bin/nnp_w9; fi
