#!/usr/bin/env bash
# The long soak, outside CI: W1 trained for STEPS steps (default 100,000)
# with peak RSS flat after warm-up (at most 1 MB of growth).
#   bash scripts/soak.sh [STEPS]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/bin/soak_w1 ] || { bash scripts/setup.sh; cmake --preset default; cmake --build build --target soak_w1; }
build/bin/soak_w1 "${1:-100000}"
