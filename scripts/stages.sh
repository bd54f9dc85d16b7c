# Sourced by scripts/test.sh and scripts/sanitize.sh: times each CI stage
# and prints one line per stage at the end, so the CI budget (tests/README.md)
# is seen on every run. Builds are measured by the CPU time of the build
# command and its compilers (user + system), tests by wall time and count.
# The lines go to $NNP_STAGE_LOG, shared by the scripts of one run.

if [ -z "${NNP_STAGE_LOG:-}" ]; then
  NNP_STAGE_LOG=$(mktemp)
  export NNP_STAGE_LOG
  stages_owner=1  # this script prints the table (also when a stage fails) and removes the log
  trap stage_report EXIT
fi

# stage_build NAME COMMAND...: runs a build, recording its CPU-seconds and wall time.
stage_build() {
  local name=$1 times status=0
  shift
  times=$(mktemp)
  local TIMEFORMAT='%R %U %S'
  { time "$@" 2>&3; } 3>&2 2>"$times" || status=$?
  awk -v name="$name" '{ printf "%s build %.0f %.0f\n", name, $2 + $3, $1 }' "$times" >>"$NNP_STAGE_LOG"
  rm -f "$times"
  return "$status"
}

# stage_test NAME COMMAND...: runs ctest, recording its wall time and how
# many tests ran.
stage_test() {
  local name=$1 output start=$SECONDS status=0
  shift
  output=$(mktemp)
  "$@" 2>&1 | tee "$output" || status=$?
  local count
  count=$(sed -n 's/.*tests* failed out of \([0-9]*\).*/\1/p' "$output" | tail -n 1)
  echo "$name test ${count:-?} $((SECONDS - start))" >>"$NNP_STAGE_LOG"
  rm -f "$output"
  return "$status"
}

# Prints the table; only the script that made the log does.
stage_report() {
  [ -n "${stages_owner:-}" ] || return 0
  echo
  echo "CI stages (budget: tests/README.md)"
  awk '
    $2 == "build" { cpu[$1] = $3; bwall[$1] = $4; order[$1] = ++n; names[n] = $1; total += $4 }
    $2 == "test" { if (!($1 in order)) { order[$1] = ++n; names[n] = $1 } tests[$1] = $3; twall[$1] = $4; total += $4 }
    END {
      printf "%-8s %14s %11s %10s %7s\n", "stage", "build CPU-s", "build wall", "test wall", "tests"
      for (i = 1; i <= n; ++i) { s = names[i]
        printf "%-8s %14s %11s %10s %7s\n", s, cpu[s] == "" ? "-" : cpu[s], bwall[s] == "" ? "-" : bwall[s] "s",
               twall[s] == "" ? "-" : twall[s] "s", tests[s] == "" ? "-" : tests[s] }
      printf "builds and tests together: %d s (%.1f min)\n", total, total / 60
    }' "$NNP_STAGE_LOG"
  rm -f "$NNP_STAGE_LOG"
}
