#!/usr/bin/env bash
# nnplug prune end to end: a trained checkpoint pruned per layer, by output
# channels and globally gives checkpoints that eval reads, with the asked
# fraction of every weight at zero; bad arguments are refused with status 2.
set -euo pipefail
nnplug=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$nnplug" train --epochs 4 --out "$tmp/run" >/dev/null
for mode in "" --structured --global; do
  output=$("$nnplug" prune --checkpoint "$tmp/run/checkpoint.safetensors" --amount 0.5 $mode --out "$tmp/pruned.safetensors")
  echo "$output"
  grep -q "50.00% of 6032 weights in 3 layers are zero" <<<"$output" || { echo "FAIL: $mode did not prune half"; exit 1; }
  "$nnplug" eval --checkpoint "$tmp/pruned.safetensors" | grep "^test accuracy" ||
    { echo "FAIL: eval cannot read the $mode pruned checkpoint"; exit 1; }
done
set +e
"$nnplug" prune --checkpoint "$tmp/run/checkpoint.safetensors" --amount 1.5 --out "$tmp/x" 2>/dev/null
[ $? -eq 2 ] || { echo "FAIL: --amount 1.5 was not refused"; exit 1; }
"$nnplug" prune --checkpoint "$tmp/run/checkpoint.safetensors" --amount 0.5 --structured --global --out "$tmp/x" 2>/dev/null
[ $? -eq 2 ] || { echo "FAIL: --structured --global was not refused"; exit 1; }
[ ! -e "$tmp/x" ] || { echo "FAIL: a refused prune wrote a file"; exit 1; }
echo "ok"
