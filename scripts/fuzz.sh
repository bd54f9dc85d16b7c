#!/usr/bin/env bash
# Runs every libFuzzer target (or those named) for SECONDS each, outside CI:
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]     (default: 600 s, every target)
#   RUNS=1000000 bash scripts/fuzz.sh 0 store_protocol   (stop after RUNS inputs instead)
# Builds the asan preset's fuzz targets into build-asan/ first. Each target
# starts from a scratch copy of its seed corpus (tests/fuzz/corpus/NAME;
# the onnx target also from ONNX's backend-test models),
# so nothing it finds lands in the repository unasked; a finding is kept
# under fuzz-findings/NAME/ with its log. Prints one line a target
# (executions, coverage, finding or none) and exits non-zero on any finding.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for seeds in tests/fuzz/corpus/*/; do targets+=("$(basename "$seeds")"); done
fi

bash scripts/setup.sh
[ -f build-asan/CMakeCache.txt ] || cmake --preset asan
cmake --build build-asan --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:intercept_tls_get_addr=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
findings=0
onnx_suite=/usr/share/libonnx-testdata/data
printf '%-20s %14s %10s  %s\n' target executions coverage finding
for name in "${targets[@]}"; do
  work=$(mktemp -d)
  cp -r "tests/fuzz/corpus/$name" "$work/corpus"
  # ONNX's own backend tests (set-up installs them) seed the importer with
  # every operator, control flow and dtype they cover.
  if [ "$name" = onnx ] && [ -d "$onnx_suite" ]; then
    for model in "$onnx_suite"/*/*/model.onnx; do
      case_dir=$(dirname "$model")
      cp "$model" "$work/corpus/suite_$(basename "$(dirname "$case_dir")")_$(basename "$case_dir").onnx"
    done
  fi
  status=0
  limit=(-max_total_time="$seconds")
  [ -n "${RUNS:-}" ] && limit=(-runs="$RUNS")
  "build-asan/bin/fuzz_$name" "${limit[@]}" -print_final_stats=1 -artifact_prefix="$work/" \
    "$work/corpus" >"$work/log" 2>&1 || status=$?
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$work/log" | grep -oE '[0-9]+$' || echo '?')
  cov=$(grep -oE 'cov: [0-9]+' "$work/log" | tail -1 | grep -oE '[0-9]+$' || echo '?')
  found=none
  if [ $status -ne 0 ]; then
    findings=$((findings + 1))
    mkdir -p "fuzz-findings/$name"
    cp "$work/log" "fuzz-findings/$name/log"
    cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* "fuzz-findings/$name/" 2>/dev/null || true
    found="exit $status: fuzz-findings/$name/"
  fi
  printf '%-20s %14s %10s  %s\n' "$name" "$runs" "$cov" "$found"
  rm -rf "$work"
done
[ $findings -eq 0 ]
