#!/usr/bin/env bash
# nnplug train --amp bf16 reaches >= 97 % on the digits (issue 46), as do
# f16 with its gradient scaler and bf16 with activation checkpointing; a
# checkpointed f32 run ends byte-identical to a plain one (the
# recomputation gives the same gradients); a bad --amp is refused.
set -euo pipefail
nnplug=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

accuracy_of() { sed -n 's/^test accuracy \([0-9.]*\)%.*/\1/p' <<<"$1"; }
for flags in "--amp bf16" "--amp f16" "--amp bf16 --checkpoint-activations"; do
  output=$("$nnplug" train $flags --out "$tmp/run" --force)
  grep -q "mixed precision" <<<"$output" || { echo "FAIL ($flags): the run does not say it is mixed precision"; exit 1; }
  accuracy=$(accuracy_of "$output")
  awk -v a="$accuracy" 'BEGIN { exit !(a >= 97.0) }' || { echo "FAIL ($flags): test accuracy $accuracy% < 97%"; exit 1; }
  echo "ok ($flags): $accuracy%"
done

"$nnplug" train --epochs 3 --out "$tmp/plain" >/dev/null
"$nnplug" train --epochs 3 --checkpoint-activations --out "$tmp/checkpointed" >/dev/null
cmp "$tmp/plain/checkpoint.safetensors" "$tmp/checkpointed/checkpoint.safetensors" ||
  { echo "FAIL: the checkpointed run's weights differ from the plain run's"; exit 1; }

if "$nnplug" train --amp f8 --out "$tmp/bad" 2>"$tmp/err"; then echo "FAIL: --amp f8 was accepted"; exit 1; fi
grep -q "give bf16 or f16" "$tmp/err" || { echo "FAIL: --amp f8's message: $(cat "$tmp/err")"; exit 1; }
echo "ok: checkpointed weights equal the plain run's; --amp f8 refused"
