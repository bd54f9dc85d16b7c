#!/usr/bin/env bash
# Work kept through faults: a checkpoint write that fails leaves the previous
# checkpoint byte-identical.
#  1. The file-size limit (ulimit -f) reached while `nnplug train --resume`
#     writes: it ends non-zero naming the file it could not write, the
#     previous checkpoint is byte-identical and no temporary file is left.
#  2. The process killed (SIGKILL) the moment its next checkpoint's temporary
#     file appears, three times: the previous checkpoint is byte-identical
#     each time (or, when the kill came after the rename, the new one is
#     whole), and the run resumes from it.
set -uo pipefail
nnplug=$1
tmp=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$tmp"

"$nnplug" train --epochs 2 --out run >/dev/null 2>&1 || fail "train --epochs 2"
cp run/checkpoint.safetensors before.safetensors
size_kb=$(( $(stat -c %s before.safetensors) / 1024 ))
(ulimit -f $((size_kb / 2)); exec "$nnplug" train --resume run/checkpoint.safetensors --epochs 4 --out run) \
  >limited.log 2>&1
status=$?
[ $status -ne 0 ] || fail "a write past the file-size limit ended with status 0"
[ $status -lt 128 ] || fail "a write past the file-size limit killed nnplug (status $status) instead of failing"
grep -q "run/.*\.\(safetensors\|csv\|svg\).*File too large" limited.log || { cat limited.log; fail "the failed write does not name its file"; }
cmp -s before.safetensors run/checkpoint.safetensors || fail "the previous checkpoint changed"
ls run | grep -q "\.tmp-" && fail "a temporary file was left: $(ls run)"
echo "ok   a file-size limit: $(grep -o "save: writing [^ ]*" limited.log | head -1) failed, previous checkpoint byte-identical"

# A wide model (checkpoints of 25 MB with Adam's state), so a write takes
# long enough for the kill to land inside it.
cat >wide.json <<'JSON'
{"type": "nn.Sequential", "children": [
  {"type": "nn.Linear", "in_features": 64, "out_features": 8192}, {"type": "nn.ReLU"},
  {"type": "nn.Linear", "in_features": 8192, "out_features": 10}]}
JSON
"$nnplug" train --model wide.json --epochs 1 --out wide >/dev/null 2>&1 || fail "train the wide model"
landed=0
for round in 1 2 3; do
  cp wide/checkpoint.safetensors before.safetensors
  "$nnplug" train --resume wide/checkpoint.safetensors --epochs 400 --out wide >/dev/null 2>&1 &
  job=$!
  seen=""
  for _ in $(seq 20000); do
    seen=$(compgen -G "wide/checkpoint.safetensors.tmp-*") && break
    kill -0 $job 2>/dev/null || break
  done
  kill -9 $job 2>/dev/null
  wait $job 2>/dev/null
  [ -n "$seen" ] || fail "round $round: no checkpoint write was seen"
  if cmp -s before.safetensors wide/checkpoint.safetensors; then
    landed=$((landed + 1))
  else
    "$nnplug" eval --checkpoint wide/checkpoint.safetensors >/dev/null 2>&1 ||
      fail "round $round: killed mid-write, the checkpoint neither is the previous one nor loads"
  fi
  rm -f wide/*.tmp-*
done
"$nnplug" eval --checkpoint wide/checkpoint.safetensors >/dev/null || fail "the checkpoint does not load after the kills"
[ $landed -ge 1 ] || fail "no kill landed inside a write in 3 rounds"
echo "ok   killed mid-write 3 times: the previous checkpoint byte-identical $landed times, whole every time"
echo "2 passed, 0 failed"
