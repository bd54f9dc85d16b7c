#!/usr/bin/env bash
# nnplug launch on this machine: ranks as processes over gloo on loopback.
# Sums across 2 and 4 ranks; a rank that dies or stalls ends the job with a
# non-zero status, within the collective's timeout, naming the rank.
set -uo pipefail
nnplug=$1
rank_program=$2
failures=0
check() {  # check NAME EXPECTED-STATUS FRAGMENT -- COMMAND...
  local name=$1 want=$2 fragment=$3
  shift 4
  local start=$SECONDS output status
  output=$(timeout 60 "$@" 2>&1)
  status=$?
  if { [ "$want" = 0 ] && [ $status -ne 0 ]; } || { [ "$want" != 0 ] && [ $status -eq 0 ]; } ||
    [ $status -eq 124 ] || ! grep -qF -- "$fragment" <<<"$output"; then
    echo "FAIL $name: status $status (want $want), output lacks '$fragment' or timed out:"
    echo "$output" | tail -20
    failures=$((failures + 1))
  else
    echo "ok   $name ($((SECONDS - start)) s)"
  fi
}
check "2 ranks sum" 0 "[rank 1] rank 1 of 2: sum 3" -- "$nnplug" launch --nproc 2 -- "$rank_program" sum
check "4 ranks sum" 0 "[rank 3] rank 3 of 4: sum 10" -- "$nnplug" launch --nproc 4 -- "$rank_program" sum
# The others' collectives fail at once, so a rank that exits within the same
# poll may be named in that line too ("..., rank 2 exited with status 1;").
check "a rank dies" 9 "rank 1 exited with status 9" -- \
  "$nnplug" launch --nproc 3 --grace 2 -- "$rank_program" die 5000
check "a rank stalls" 1 "did not finish within 3000 ms" -- "$nnplug" launch --nproc 2 --grace 2 -- "$rank_program" stall 3000
check "no program" 2 "no program" -- "$nnplug" launch --nproc 2
# Two processes claiming rank 1 (started by hand, as a typo in RANK would):
# one of them is told so within its timeout, and no process hangs.
dup_start=$SECONDS
port=$((20000 + RANDOM % 20000))
dir=$(mktemp -d)
for r in 0 1 1; do
  RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port NNP_JOB_TOKEN=duplicate-rank-test-secret \
    timeout 60 "$rank_program" slow 4000 >>"$dir/out" 2>&1 &
  sleep 0.2
done
wait
if grep -qE "another process joined as rank 1|two processes claim rank 1" "$dir/out" && [ $((SECONDS - dup_start)) -lt 30 ]; then
  echo "ok   two processes claim rank 1 ($((SECONDS - dup_start)) s)"
else
  echo "FAIL two processes claim rank 1: no refusal, or it took $((SECONDS - dup_start)) s:"
  cat "$dir/out"
  failures=$((failures + 1))
fi
rm -rf "$dir"
echo "$((6 - failures)) passed, $failures failed"
[ $failures -eq 0 ]
