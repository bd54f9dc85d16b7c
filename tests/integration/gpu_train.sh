#!/usr/bin/env bash
# `nnplug train --device BACKEND` on a GPU backend, then the checkpoint
# evaluated there compiled (graph mode) and as written, which must agree, and
# `nnplug bench` of it there; exits 77 (ctest: skipped, with the reason
# printed) where the backend has no device here.
set -euo pipefail
nnplug=$1
backend=$2
devices=$("$nnplug" devices)
if ! grep -q "^$backend:0 " <<<"$devices"; then
  echo "SKIPPED: no $backend device here:"
  grep "^$backend " <<<"$devices" || echo "  the $backend backend is not built"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$nnplug" train --device "$backend" --out "$out" | tee "$out/log.txt"
accuracy=$(grep -o "test accuracy [0-9.]*" "$out/log.txt" | grep -o "[0-9.]*$")
awk -v a="$accuracy" 'BEGIN { exit !(a >= 97) }' || { echo "FAIL: test accuracy $accuracy% < 97%"; exit 1; }
# Graph mode on the device: the compiled model's accuracy is the eager one's.
ckpt=$out/checkpoint.safetensors
"$nnplug" eval --checkpoint "$ckpt" --device "$backend:0" --verbose | tee "$out/compiled.txt"
"$nnplug" eval --checkpoint "$ckpt" --device "$backend:0" --no-compile | tee "$out/eager.txt"
grep -q "the captured plan" "$out/compiled.txt" || { echo "FAIL: the compiled evaluation did not run its plan"; exit 1; }
compiled=$(grep -o "accuracy [0-9.]*%" "$out/compiled.txt")
eager=$(grep -o "accuracy [0-9.]*%" "$out/eager.txt")
[ -n "$eager" ] && [ "$compiled" = "$eager" ] || { echo "FAIL: compiled $compiled, eager $eager"; exit 1; }
"$nnplug" bench --checkpoint "$ckpt" --device "$backend:0" --shape 64,1,8,8 -n 200
