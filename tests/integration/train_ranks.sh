#!/usr/bin/env bash
# `nnplug train --nproc 2` on the digits: two ranks over gloo on loopback
# reach >= 97 % test accuracy, rank 0 alone writes the run's files, eval of
# its checkpoint agrees, and the curves are one process's on the same batches. Then one rank is killed mid-training: the job
# ends non-zero within the timeout, naming the rank, and the last checkpoint
# written before it still loads.
set -uo pipefail
nnplug=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

output=$(timeout 600 "$nnplug" train --nproc 2 --out "$tmp/run" 2>&1) || { echo "$output"; fail "train --nproc 2 failed"; }
echo "$output" | tail -4
grep -qF "[rank 0] training on cpu:0 x 2 ranks" <<<"$output" || fail "rank 0 did not say it trains on 2 ranks"
! grep -q "^\[rank 1\]" <<<"$output" || fail "rank 1 printed; only rank 0 reports"
accuracy=$(sed -n 's/^\[rank 0\] test accuracy \([0-9.]*\)%.*/\1/p' <<<"$output")
awk -v a="$accuracy" 'BEGIN { exit !(a >= 97.0) }' || fail "test accuracy '$accuracy'% < 97%"
[ "$(ls "$tmp/run")" = "$(printf 'best.safetensors\ncheckpoint.safetensors\ncurves.svg\nmetrics.csv')" ] ||
  fail "the run folder holds $(ls "$tmp/run" | tr '\n' ' ')"
"$nnplug" eval --checkpoint "$tmp/run/checkpoint.safetensors" | grep "test accuracy $accuracy%" ||
  fail "eval of rank 0's checkpoint disagrees with train"
odd=$("$nnplug" train --nproc 2 --batch-size 33 --out "$tmp/odd" 2>&1)
[ $? -eq 1 ] && grep -qF "make it a multiple of 2" <<<"$odd" && [ ! -e "$tmp/odd" ] ||
  fail "an odd batch for 2 ranks was not refused before starting: $odd"

# Two ranks' shares of a step are one process's batch: the same curves, up
# to the rounding of averaging two means instead of taking one.
"$nnplug" train --nproc 2 --seed 3 --epochs 3 --out "$tmp/two" >/dev/null 2>&1 || fail "train --nproc 2 --seed 3"
"$nnplug" train --seed 3 --epochs 3 --out "$tmp/one" >/dev/null 2>&1 || fail "train --seed 3"
paste -d, "$tmp/two/metrics.csv" "$tmp/one/metrics.csv" | awk -F, 'NR > 1 {
    for (i = 2; i <= 5; i++) { d = $i - $(i + 5); if (d < 0) d = -d; if (d > 1e-3) { print "column " i " epoch " $1 ": " $i " vs " $(i + 5); bad = 1 } } }
  END { exit bad }' || fail "2 ranks' curves differ from one process's on the same batches"

# A single launched rank trains through a group of one: one process's curves.
"$nnplug" launch --nproc 1 -- "$nnplug" train --seed 3 --epochs 3 --out "$tmp/single" >/dev/null 2>&1 ||
  fail "launch --nproc 1 -- train"
paste -d, "$tmp/single/metrics.csv" "$tmp/one/metrics.csv" | awk -F, 'NR > 1 {
    for (i = 2; i <= 5; i++) { d = $i - $(i + 5); if (d < 0) d = -d; if (d > 1e-6) bad = 1 } } END { exit bad }' ||
  fail "one launched rank's curves differ from one process's"

# Kill rank 1 once the first checkpoint exists.
start=$SECONDS
"$nnplug" train --nproc 2 --epochs 200 --out "$tmp/killed" >"$tmp/killed.log" 2>&1 &
job=$!
for _ in $(seq 600); do
  [ -s "$tmp/killed/checkpoint.safetensors" ] && break
  sleep 0.1
done
[ -s "$tmp/killed/checkpoint.safetensors" ] || { kill $job; fail "no checkpoint after 60 s"; }
victim=""
for pid in $(pgrep -f "train --epochs 200 --out $tmp/killed"); do
  tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "RANK=1" && victim=$pid
done
[ -n "$victim" ] || { kill $job; fail "rank 1's process not found"; }
kill -9 "$victim"
timeout 120 tail --pid=$job -f /dev/null || { kill -9 $job; fail "the job did not end within 120 s of losing rank 1"; }
wait $job
status=$?
[ $status -ne 0 ] || fail "the job ended with status 0 after losing rank 1"
grep -qF "rank 1 was killed by signal" "$tmp/killed.log" || { cat "$tmp/killed.log"; fail "the launch did not name rank 1"; }
"$nnplug" eval --checkpoint "$tmp/killed/checkpoint.safetensors" >/dev/null || fail "the last checkpoint does not load"
echo "ok: $accuracy% on 2 ranks; losing rank 1 ended the job in $((SECONDS - start)) s (status $status), checkpoint intact"
