#!/usr/bin/env bash
# Runs a libFuzzer target for a bounded time on a scratch copy of its seed
# corpus and prints how many inputs it executed.
set -euo pipefail
fuzzer=$1
seeds=$2
seconds=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$seeds" "$work/corpus"
"$fuzzer" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" 2>"$work/log" || {
  tail -50 "$work/log"
  for crash in "$work"/crash-* "$work"/leak-* "$work"/timeout-*; do
    [ -e "$crash" ] && { echo "reproducer ($crash), base64:"; base64 "$crash"; }
  done
  exit 1
}
grep -E "stat::number_of_executed_units|cov:" "$work/log" | tail -2
