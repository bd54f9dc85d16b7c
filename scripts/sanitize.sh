#!/usr/bin/env bash
# The sanitizer stage: builds the `asan` preset (clang 15, AddressSanitizer +
# UndefinedBehaviorSanitizer, LeakSanitizer on; no GPU code) into build-asan/
# and runs the unit, conformance, plugin-loading and CLI tests and the fuzz
# targets under it; then the concurrency tests under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ ! -f build-asan/CMakeCache.txt ]; then
  cmake --preset asan
fi
cmake --build --preset asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --preset asan

# ThreadSanitizer: the concurrency tests, on a TSan build of the core, the
# host backends and the unit tests.
if [ ! -f build-tsan/CMakeCache.txt ]; then
  cmake --preset tsan
fi
cmake --build --preset tsan
ctest --preset tsan
