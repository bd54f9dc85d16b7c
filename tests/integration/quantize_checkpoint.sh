#!/usr/bin/env bash
# nnplug quantize end to end: the digits CNN and W1's MLP (784-512-512-10,
# here on the digits' 64 features), trained, then quantized dynamically and
# statically (calibrated on 10 batches), lose at most 1 point of held-out
# accuracy; eval reads the quantized checkpoints; --resume refuses them;
# bad arguments are refused with status 2 and write nothing.
set -euo pipefail
nnplug=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/mlp.json" <<'JSON'
{"type": "nn.Sequential", "children": [
  {"type": "nn.Linear", "in_features": 64, "out_features": 512}, {"type": "nn.ReLU"},
  {"type": "nn.Linear", "in_features": 512, "out_features": 512}, {"type": "nn.ReLU"},
  {"type": "nn.Linear", "in_features": 512, "out_features": 10}]}
JSON
"$nnplug" train --epochs 10 --out "$tmp/cnn" >/dev/null
"$nnplug" train --epochs 10 --model "$tmp/mlp.json" --out "$tmp/mlp" >/dev/null

for model in cnn mlp; do
  for calibrate in 0 10; do
    output=$("$nnplug" quantize --checkpoint "$tmp/$model/checkpoint.safetensors" --calibrate $calibrate \
      --out "$tmp/q.safetensors")
    echo "$model --calibrate $calibrate: $output"
    read -r before after < <(sed -n 's/^test accuracy \([0-9.]*\)% float, \([0-9.]*\)% quantized.*/\1 \2/p' <<<"$output")
    awk -v b="$before" -v a="$after" 'BEGIN { exit !(b - a <= 1.0 && a > 50) }' ||
      { echo "FAIL: $model lost more than 1 point ($before% -> $after%)"; exit 1; }
    eval_out=$("$nnplug" eval --checkpoint "$tmp/q.safetensors")
    grep -q "^test accuracy $after%" <<<"$eval_out" ||
      { echo "FAIL: eval of the quantized $model gives '$eval_out', not $after%"; exit 1; }
  done
done

set +e
"$nnplug" quantize --checkpoint "$tmp/cnn/checkpoint.safetensors" --calibrate -1 --out "$tmp/x" 2>/dev/null
[ $? -eq 2 ] || { echo "FAIL: --calibrate -1 was not refused"; exit 1; }
[ ! -e "$tmp/x" ] || { echo "FAIL: a refused quantize wrote a file"; exit 1; }
"$nnplug" quantize --checkpoint "$tmp/q.safetensors" --out "$tmp/x" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "quantized model already" "$tmp/err" || { echo "FAIL: quantizing twice was not refused"; exit 1; }
"$nnplug" train --resume "$tmp/q.safetensors" --epochs 11 --out "$tmp/r" 2>"$tmp/err"
[ $? -ne 0 ] && grep -q "quantized model" "$tmp/err" || { echo "FAIL: --resume of a quantized checkpoint: $(cat "$tmp/err")"; exit 1; }
echo "ok"
