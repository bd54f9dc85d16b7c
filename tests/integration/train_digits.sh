#!/usr/bin/env bash
# The main job end to end: default training on the digits reaches >= 97 %
# test accuracy and leaves a checkpoint and a curve picture; eval agrees; a
# run stopped after 3 epochs and resumed to 6 ends byte-identical to a run
# of 6.
set -euo pipefail
nnplug=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

output=$("$nnplug" train --out "$tmp/full")
echo "$output"
accuracy=$(sed -n 's/^test accuracy \([0-9.]*\)%.*/\1/p' <<<"$output")
awk -v a="$accuracy" 'BEGIN { exit !(a >= 97.0) }' || { echo "FAIL: test accuracy $accuracy% < 97%"; exit 1; }
[ -s "$tmp/full/checkpoint.safetensors" ] || { echo "FAIL: no checkpoint"; exit 1; }
grep -q "<polyline" "$tmp/full/curves.svg" || { echo "FAIL: no curves in the SVG"; exit 1; }
"$nnplug" eval --checkpoint "$tmp/full/checkpoint.safetensors" | grep "test accuracy $accuracy%" ||
  { echo "FAIL: eval disagrees with train"; exit 1; }

"$nnplug" train --epochs 6 --out "$tmp/straight" >/dev/null
"$nnplug" train --epochs 3 --out "$tmp/resumed" >/dev/null
"$nnplug" train --epochs 6 --resume "$tmp/resumed/checkpoint.safetensors" --out "$tmp/resumed" >/dev/null
cmp "$tmp/straight/checkpoint.safetensors" "$tmp/resumed/checkpoint.safetensors" ||
  { echo "FAIL: the resumed run differs from the uninterrupted one"; exit 1; }
echo "ok: $accuracy% test accuracy; resume is exact"
