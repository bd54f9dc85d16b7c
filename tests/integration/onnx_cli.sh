#!/usr/bin/env bash
# nnplug export and import end to end: the digits CNN, trained and
# exported, imported back (nnplug import; eval and summary reading the .onnx
# directly) gives the checkpoint's accuracy, and run by ONNX Runtime (npm
# onnxruntime-node) over every row of the digits gives the accuracy nnplug
# eval reports; a spec exports without a checkpoint; bad arguments and files
# are refused and write nothing. Exit 77 (skipped) without ONNX Runtime,
# after the checks that do not need it.
set -euo pipefail
nnplug=$1
client=$2
data=$3
fixtures=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$nnplug" train --epochs 3 --out "$tmp/cnn" >/dev/null
out=$("$nnplug" export --checkpoint "$tmp/cnn/checkpoint.safetensors" --out "$tmp/cnn.onnx")
echo "$out"
scale=$(sed -n 's/.*input scale \([0-9.e-]*\)).*/\1/p' <<<"$out")
[ -s "$tmp/cnn.onnx" ] && [ -n "$scale" ] || { echo "FAIL: export wrote no file or no scale"; exit 1; }

cat >"$tmp/mlp.json" <<'JSON'
{"type": "nn.Sequential", "children": [
  {"type": "nn.Linear", "in_features": 64, "out_features": 32}, {"type": "nn.Tanh"},
  {"type": "nn.Linear", "in_features": 32, "out_features": 10}]}
JSON
"$nnplug" export --model "$tmp/mlp.json" --input-shape 64 --opset 13 --fixed-batch --out "$tmp/mlp.onnx" | grep "opset 13, fixed batch" ||
  { echo "FAIL: a spec alone did not export"; exit 1; }

# Import: the exported file read back gives the checkpoint's own figures.
test_line=$("$nnplug" eval --checkpoint "$tmp/cnn/checkpoint.safetensors")
onnx_line=$("$nnplug" eval --checkpoint "$tmp/cnn/checkpoint.safetensors" --model "$tmp/cnn.onnx")
[ "$test_line" = "$onnx_line" ] || { echo "FAIL: eval of the .onnx ('$onnx_line') differs from the checkpoint's ('$test_line')"; exit 1; }
# eval runs the model compiled (graph mode) by default: the same figures as
# eager, and --verbose says what the plan did.
eager_line=$("$nnplug" eval --checkpoint "$tmp/cnn/checkpoint.safetensors" --no-compile)
[ "$test_line" = "$eager_line" ] || { echo "FAIL: compiled eval ('$test_line') differs from eager ('$eager_line')"; exit 1; }
"$nnplug" eval --checkpoint "$tmp/cnn/checkpoint.safetensors" --verbose | grep "last call: the captured plan" ||
  { echo "FAIL: eval --verbose does not say the captured plan ran"; exit 1; }
# bench: latency percentiles of both modes, their ratio, the peak memory.
bench=$("$nnplug" bench "$tmp/cnn.onnx" --shape input=16,1,8,8 -n 5 --warmup 1 --verbose)
for line in "^device cpu:0: .*thread" "^eager +p50" "^compiled +p50" "^compiled / eager \(p50\)" "last call: the captured plan" "^compiled call: peak tensor memory [0-9.]+ MB" "^peak memory"; do
  grep -Eq "$line" <<<"$bench" || { echo "FAIL: nnplug bench printed no '$line': $bench"; exit 1; }
done
set +e
# A checkpoint knows its samples' shape: a batch of 64 of them without --shape.
ckpt_bench=$("$nnplug" bench --checkpoint "$tmp/cnn/checkpoint.safetensors" -n 3 --warmup 1)
grep -q "inputs \[64,1,8,8\] f32" <<<"$ckpt_bench" || { echo "FAIL: bench of a checkpoint without --shape: $ckpt_bench"; exit 1; }
"$nnplug" bench "$tmp/cnn.onnx" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "give each input's shape" "$tmp/err" || { echo "FAIL: bench without --shape: $(cat "$tmp/err")"; exit 1; }
"$nnplug" bench "$tmp/cnn.onnx" --shape 16,1,8,x 2>"$tmp/err"
[ $? -ne 0 ] && grep -q "shape" "$tmp/err" || { echo "FAIL: bench with a bad shape: $(cat "$tmp/err")"; exit 1; }
set -e
"$nnplug" import "$tmp/cnn.onnx" --out "$tmp/imported" | grep "GraphModule" || { echo "FAIL: import"; exit 1; }
all=$(sed -n 's/.*; \([0-9.]*\)% on all.*/\1/p' <<<"$test_line")
"$nnplug" eval --model "$tmp/imported/model.json" --weights "$tmp/imported/model.safetensors" --input-shape 1,8,8 \
  --scale "$scale" | grep -q "^accuracy $all% on all" || { echo "FAIL: the imported spec and weights lose accuracy"; exit 1; }
summary=$("$nnplug" summary --model "$tmp/cnn.onnx" --input-shape 2,1,8,8)
grep -q "Conv2d" <<<"$summary" || { echo "FAIL: summary of an .onnx"; exit 1; }
# PyTorch's exports import in a fresh process, and the spec alone (without
# its weights) still computes the right shapes: its constants live in it.
for model in lstm:7,2,8 encoder:2,6,16; do
  name=${model%%:*}
  "$nnplug" import "$fixtures/$name.onnx" --out "$tmp/$name" >/dev/null || { echo "FAIL: PyTorch's $name did not import"; exit 1; }
  summary=$("$nnplug" summary --model "$tmp/$name/model.json" --input-shape "${model#*:}")
  grep -q "^total parameters" <<<"$summary" || { echo "FAIL: summary of the imported $name spec"; exit 1; }
done
echo "garbage" >"$tmp/bad.onnx"
set +e
"$nnplug" import "$tmp/bad.onnx" --out "$tmp/bad" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "not an ONNX model" "$tmp/err" && [ ! -e "$tmp/bad/model.json" ] ||
  { echo "FAIL: a garbage .onnx was not refused cleanly: $(cat "$tmp/err")"; exit 1; }
set -e

refused() {  # expected status, then the arguments; the output file must not appear
  local want=$1
  shift
  set +e
  "$nnplug" export "$@" --out "$tmp/x.onnx" 2>"$tmp/err"
  local got=$?
  set -e
  [ "$got" -eq "$want" ] || { echo "FAIL: export $* exited $got, not $want: $(cat "$tmp/err")"; exit 1; }
  [ ! -e "$tmp/x.onnx" ] || { echo "FAIL: a refused export ($*) wrote a file"; exit 1; }
  head -1 "$tmp/err"
}
refused 2
refused 2 --model "$tmp/mlp.json"
refused 2 --model "$tmp/mlp.json" --input-shape 64 --batch 0
refused 1 --model "$tmp/mlp.json" --input-shape 64 --opset 9
refused 1 --model "$tmp/mlp.json" --input-shape 63
refused 1 --model "$tmp/mlp.json" --input-shape 6x4
refused 1 --checkpoint "$tmp/missing.safetensors"
refused 1 --checkpoint "$tmp/mlp.json"
set +e
"$nnplug" export --model "$tmp/mlp.json" --input-shape 64 --out "$tmp/no/such/folder/x.onnx" 2>/dev/null
[ $? -eq 1 ] || { echo "FAIL: an unwritable --out was not refused"; exit 1; }
set -e

if [ ! -f "$client/node_modules/onnxruntime-node/package.json" ] || ! command -v node >/dev/null; then
  echo "SKIPPED: ONNX Runtime (npm onnxruntime-node in $client) is not installed; scripts/setup.sh installs it"
  exit 77
fi
nnplug_all=$("$nnplug" eval --checkpoint "$tmp/cnn/checkpoint.safetensors" | sed -n 's/.*; \([0-9.]*\)% on all.*/\1/p')
ort_all=$(node "$client/accuracy.js" "$tmp/cnn.onnx" "$data" "$scale" 1,8,8)
echo "accuracy on every row: nnplug $nnplug_all%, ONNX Runtime $ort_all%"
awk -v a="$nnplug_all" -v b="$ort_all" 'BEGIN { d = a - b; exit !(a > 80 && d <= 0.1 && d >= -0.1) }' ||
  { echo "FAIL: ONNX Runtime's accuracy differs from nnplug's"; exit 1; }
