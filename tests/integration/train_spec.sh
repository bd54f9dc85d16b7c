#!/usr/bin/env bash
# An example model spec trains on the digits to >= 97 % test accuracy and
# evaluates the same from its checkpoint.
set -euo pipefail
nnplug=$1
spec=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

output=$("$nnplug" train --model "$spec" --out "$tmp/run")
echo "$output"
accuracy=$(sed -n 's/^test accuracy \([0-9.]*\)%.*/\1/p' <<<"$output")
awk -v a="$accuracy" 'BEGIN { exit !(a >= 97.0) }' || { echo "FAIL: $spec: test accuracy $accuracy% < 97%"; exit 1; }
"$nnplug" eval --checkpoint "$tmp/run/checkpoint.safetensors" | grep "test accuracy $accuracy%" ||
  { echo "FAIL: eval disagrees with train"; exit 1; }
echo "ok: $spec reaches $accuracy%"
