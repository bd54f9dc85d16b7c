# Sourced by the hostile-input corpora (hostile_cli.sh, hostile_kit.sh): runs
# cases and judges them. A case's command must exit with its status within
# $limit seconds and print its fragment; none may print a raw control byte.
# finish prints the count per class and exits non-zero if any case failed.
failures=0
declare -A count

# expect CLASS STATUS FRAGMENT -- COMMAND...: the command must exit with
# STATUS within $limit seconds and print FRAGMENT.
limit=60
expect() {
  local class=$1 status=$2 fragment=$3
  shift 4
  local output rc
  output=$(timeout "$limit" "$@" 2>&1)
  rc=$?
  judge "$class" "$status" "$fragment" "$rc" "$output" "$*"
}

# expect_all CLASS STATUS FRAGMENT... -- COMMAND...: one run of the command,
# each fragment judged as a case of its own.
expect_all() {
  local class=$1 status=$2 fragments=()
  shift 2
  while [ "$1" != "--" ]; do
    fragments+=("$1")
    shift
  done
  shift
  local output rc fragment
  output=$(timeout "$limit" "$@" 2>&1)
  rc=$?
  for fragment in "${fragments[@]}"; do judge "$class" "$status" "$fragment" "$rc" "$output" "$*"; done
}

# judge CLASS STATUS FRAGMENT RC OUTPUT COMMAND: one case's verdict.
judge() {
  local class=$1 status=$2 fragment=$3 rc=$4 output=$5 command=$6
  count[$class]=$((${count[$class]:-0} + 1))
  if [ "$rc" -ne "$status" ]; then
    echo "FAIL (class $class): exit $rc, expected $status: $command"
    echo "$output" | tail -5
    failures=$((failures + 1))
  elif [ -n "$fragment" ] && ! grep -qF -- "$fragment" <<<"$output"; then
    echo "FAIL (class $class): output lacks '$fragment': $command"
    echo "$output" | tail -5
    failures=$((failures + 1))
  elif LC_ALL=C grep -q $'[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]' <<<"$output"; then
    echo "FAIL (class $class): a control byte reached the terminal: $command"
    failures=$((failures + 1))
  fi
}

finish() {
  echo
  for class in "${!count[@]}"; do echo "class $class: ${count[$class]} cases"; done | sort -V
  [ "$failures" -eq 0 ] || { echo "$failures failed"; exit 1; }
  echo "all passed"
}
