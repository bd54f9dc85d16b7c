#!/usr/bin/env bash
# Issue 14, class 9 as a corpus: the conformance kit survives the backend it
# tests (the flawed backends of tests/plugins) and refuses what is not one.
# A case fails on a wrong exit status, a missing fragment, a hang or a raw
# control byte (hostile_cases.sh). Its own ctest, so it runs beside the CLI
# corpus (hostile_cli.sh) rather than after it.
set -uo pipefail
nnplug=$1
corpus=${2:-}  # the plugin corpus (tests/plugins): the flawed backends
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/hostile_cases.sh"
cd "$tmp"

# ---- class 9: the conformance kit survives the backend it tests ----
# A whole kit run over a flawed backend (reference loops) takes 75 s under
# ASan on a slow 2-core machine, its conv family 66 s of it: each backend
# runs once, and only the family that shows its flaw unless the flaw is
# what happens to the rest of the run (a crash, a hang, an old ABI). A hang
# is still caught, by the kit's own --timeout and by this limit.
limit=300
if [ -n "$corpus" ]; then
  expect_all 9 1 "[3/19] binary: 0 cases, then CRASHED in add f32" "[9/19] random: 25 cases, 0 failed" \
    "the backend crashed (" -- "$nnplug" conformance --backend "$corpus/libflawed_crash.so"
  expect_all 9 1 "HUNG in where" "[9/19] random:" -- \
    "$nnplug" conformance --backend "$corpus/libflawed_hang.so" --timeout 5
  expect 9 0 "note: the backend does not declare i8, i16, u16, u32, u64, round: their cases are skipped" -- \
    "$nnplug" conformance --backend "$corpus/libflawed_pre17.so"
  expect_all 9 1 "FAIL  rand f32 [1000] after a draw of 13" "FAIL  randn f64 [1000] after a draw of 13" \
    "FAIL  randint i64 [1000] after a draw of 13" -- \
    "$nnplug" conformance --backend "$corpus/libflawed_offset.so" --family random
  expect_all 9 1 "FAIL  softmax f32 large logits" "FAIL  log_softmax f64 large logits" \
    "FAIL  softmax f32 a row of equal logits 1e4" -- \
    "$nnplug" conformance --backend "$corpus/libflawed_softmax.so" --family softmax
  expect_all 9 1 "FAIL  copy f32 to f16 at rounding boundaries" "FAIL  copy f64 to bf16 at rounding boundaries" -- \
    "$nnplug" conformance --backend "$corpus/libflawed_rounding.so" --family copy
fi
# The whole kit on cpu, through a child process per family (also the ctest
# cli_conformance_cpu that this replaced): every case passes.
expect 9 0 "[1/19] copy:" -- "$nnplug" conformance --backend cpu
expect 9 0 "0 failed" -- "$nnplug" conformance --backend reference --family softmax
expect 9 1 "no family 'bogus'" -- "$nnplug" conformance --backend cpu --family bogus
echo "0.1,1,2,3,0" >text.so
expect 9 1 "not an ELF file" -- "$nnplug" conformance --backend text.so

finish
