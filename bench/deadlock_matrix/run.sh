#!/usr/bin/env bash
# The whole deadlock matrix (tests/dataplane/deadlock_matrix_test.cpp) on a real
# dev cluster: every shape x acking on/off x max.spout.pending unset/1000 x
# several workers on one node / one worker per node, RSTORM_MATRIX_SECS seconds
# each (default 60), then the finite cases; prints one table row per case.
#
# Usage: bench/deadlock_matrix/run.sh [BUILD_DIR]   (default: build)
# Build first: cmake --build BUILD_DIR --target deadlock_matrix_test
# About 40 progress cases x (60 s + ~10 s to submit and kill) + ~20 finite cases:
# about an hour. The full log is kept in $TMPDIR (printed at the end).
set -u
build=${1:-build}
test_bin="$build/bin/deadlock_matrix_test"
[ -x "$test_bin" ] || { echo "no $test_bin: build the deadlock_matrix_test target first" >&2; exit 2; }
log=$(mktemp "${TMPDIR:-/tmp}/deadlock-matrix.XXXXXX.log")
RSTORM_MATRIX_FULL=1 RSTORM_MATRIX_SECS=${RSTORM_MATRIX_SECS:-60} "$test_bin" 2>&1 | tee "$log" |
  grep --line-buffered -E '^MATRIX |^\[  (FAILED|     OK|PASSED) ' >&2
status=${PIPESTATUS[0]}
echo
printf '%-52s %7s %14s %16s  %s\n' case seconds "acked at end" "min growth/s" result
grep '^MATRIX ' "$log" | sed 's/^MATRIX //' | awk '{
  for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
  printf "%-52s %7s %14s %16s  %s\n", v["case"], v["secs"], v["acked"], (v["result"] == "ok" ? v["min_growth"] : "-"), v["result"]
}'
echo
echo "acked at end: spout acks (acking on) or the first sink's executions (acking off)."
echo "min growth/s: the smallest one-second growth of any progress counter (progress cases)."
echo "log: $log   test exit status: $status"
exit "$status"
