#!/usr/bin/env bash
# nnplug train --profile and nnplug profile end to end: five steps after five
# warm-up steps are profiled, the trace file holds their ProfilerStep scopes,
# ops, modules and backward nodes, and the summary table is printed.
set -euo pipefail
nnplug=$1
specs=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

output=$("$nnplug" train --epochs 1 --profile "$tmp/train.json" --out "$tmp/run")
head -8 <<<"$output"
grep -q "^Self CPU time total: " <<<"$output" || { echo "FAIL: no summary table"; exit 1; }
grep -q "^test accuracy" <<<"$output" || { echo "FAIL: training did not finish"; exit 1; }
for needle in '"traceEvents"' '"ph":"X"' '"ProfilerStep#5"' '"ProfilerStep#9"' '"nn.Module: Conv2d"' '"matmul"' \
  'autograd::engine::evaluate_function' '"Input Dims"'; do
  grep -qF "$needle" "$tmp/train.json" || { echo "FAIL: $needle is not in the trace"; exit 1; }
done
if grep -qF '"ProfilerStep#4"' "$tmp/train.json"; then echo "FAIL: a warm-up step was profiled"; exit 1; fi

output=$("$nnplug" profile --model "$specs/digits_mlp.json" --input-shape 16,64 --steps 3 --trace "$tmp/p.json" \
  --sort-by cpu_time_total --row-limit 5)
echo "$output"
grep -q "^Self CPU time total: " <<<"$output" || { echo "FAIL: no summary table"; exit 1; }
grep -qF '"ProfilerStep#4"' "$tmp/p.json" || { echo "FAIL: the last profiled step is not in the trace"; exit 1; }
set +e
"$nnplug" train --epochs 1 --profile "$tmp" --out "$tmp/refused" >/dev/null 2>&1
[ $? -eq 1 ] && [ ! -e "$tmp/refused" ] || { echo "FAIL: --profile naming a folder was not refused before training"; exit 1; }
"$nnplug" profile --model "$specs/digits_mlp.json" --input-shape 16,64 --sort-by speed >/dev/null 2>&1
[ $? -eq 1 ] || { echo "FAIL: an unknown --sort-by was not refused"; exit 1; }
echo "ok"
