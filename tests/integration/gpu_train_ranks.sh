#!/usr/bin/env bash
# One rank of `nnplug train --device cuda` launched through the nccl plugin
# (DistributedDataParallel over a group of one on cuda:0) trains exactly as
# one process does: the same curves within 1e-6 on the same seed. Exits 77
# (ctest: skipped, with the reason) where there is no CUDA device or the
# nccl plugin cannot form groups.
set -uo pipefail
nnplug=$1
fail() { echo "FAIL: $*"; exit 1; }
devices=$("$nnplug" devices)
if ! grep -q "^cuda:0 " <<<"$devices"; then
  echo "SKIPPED: no cuda device here:"
  grep "^cuda " <<<"$devices" || echo "  the cuda backend is not built"
  exit 77
fi
nccl=$(grep "^communication backend nccl " <<<"$devices")
[ -n "$nccl" ] || { echo "SKIPPED: the nccl plugin is not built"; exit 77; }
grep -q ": available$" <<<"$nccl" || { echo "SKIPPED: $nccl"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$nnplug" train --device cuda --seed 3 --epochs 3 --out "$tmp/one" >"$tmp/one.log" 2>&1 ||
  { cat "$tmp/one.log"; fail "train --device cuda"; }
"$nnplug" launch --nproc 1 -- "$nnplug" train --device cuda --seed 3 --epochs 3 --out "$tmp/rank" \
  >"$tmp/rank.log" 2>&1 || { cat "$tmp/rank.log"; fail "launch --nproc 1 -- train --device cuda"; }
cat "$tmp/rank.log"
grep -qF "training on cuda:0 x 1 ranks" "$tmp/rank.log" || fail "the launched rank did not train on cuda:0 as a group"
paste -d, "$tmp/rank/metrics.csv" "$tmp/one/metrics.csv" | awk -F, 'NR > 1 {
    for (i = 2; i <= 5; i++) { d = $i - $(i + 5); if (d < 0) d = -d; if (d > worst) worst = d; if (d > 1e-6) {
      print "column " i " epoch " $1 ": " $i " over nccl vs " $(i + 5) " alone"; bad = 1 } } }
  END { printf "largest difference between the curves: %g\n", worst; exit bad }' ||
  fail "one rank over nccl trains differently from one process"
echo "ok: one rank over nccl matches one process over 3 epochs"
