#!/usr/bin/env bash
# The sanitizer stages: builds the `asan` preset (clang 15, AddressSanitizer +
# UndefinedBehaviorSanitizer, LeakSanitizer on; no GPU code) into build-asan/
# and runs the unit, conformance, plugin-loading and CLI tests and the fuzz
# targets under it; then the concurrency tests under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stages.sh
bash scripts/setup.sh

build_preset() {  # configures once, then builds the preset's targets
  [ -f "build-$1/CMakeCache.txt" ] || cmake --preset "$1"
  cmake --build --preset "$1"
}

stage_build asan build_preset asan
# LeakSanitizer (clang 15, glibc 2.36) stops the world by reading every
# thread's dynamic-TLS ranges, and a bogus one from a dlopen'd plugin's TLS
# crashes its tracer at a program's exit ("Tracer caught signal 11"): seen at
# the exit of `nnplug eval` on a quantized checkpoint and of conformance_test
# under load. Leak checking stays on; __tls_get_addr is not intercepted (the
# loader's TLS blocks are still roots), for every test rather than the one
# it was first seen in.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:intercept_tls_get_addr=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
stage_test asan ctest --preset asan

# ThreadSanitizer: the concurrency tests, on a TSan build of the core, the
# host backends and the unit tests.
stage_build tsan build_preset tsan
stage_test tsan ctest --preset tsan
