#!/usr/bin/env bash
# fuzz/run.sh [runs-per-target]: configures build-fuzz/ if it is not there
# (Debian's clang, ASan+UBSan, RSTORM_FUZZ=ON), builds the fuzz targets, and
# runs each one for N inputs (default 20000, what CI runs) from a temporary
# copy of its seed corpus, so that nothing new is written into fuzz/corpus/.
# Prints, per target, the inputs run and the crashes (a crash, a failed check,
# a sanitizer report, a leak, a timeout or an out-of-memory), and exits 1 when
# any target crashed. `fuzz/run.sh 1000000` is the long run (fuzz/README.md).
#
# Environment: RSTORM_FUZZ_BUILD (build directory, default <repo>/build-fuzz),
# RSTORM_FUZZ_JOBS (build jobs, default 2), RSTORM_FUZZ_MAX_SECONDS (time
# limit per target; default 3600 below 1000000 inputs, none from there: the
# slowest target, fuzz_config_yaml, runs about 220 inputs/s under ASan on one
# core, so a million takes it over an hour), RSTORM_FUZZ_TIMEOUT (seconds one
# input may take before it counts as a hang; default 10, 60 from 1000000
# inputs: a long run shares the machine, and a 0.2 s input once took 12 s
# beside a build), RSTORM_FUZZ_TARGETS (names, default all).
set -euo pipefail

runs=${1:-20000}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${RSTORM_FUZZ_BUILD:-$root/build-fuzz}
jobs=${RSTORM_FUZZ_JOBS:-2}
if [[ $runs -ge 1000000 ]]; then default_max=0 default_timeout=60; else default_max=3600 default_timeout=10; fi
max_seconds=${RSTORM_FUZZ_MAX_SECONDS:-$default_max}  # 0: no limit
timeout=${RSTORM_FUZZ_TIMEOUT:-$default_timeout}
read -r -a targets <<< "${RSTORM_FUZZ_TARGETS:-fuzz_frame fuzz_thrift fuzz_nimbus_rpc \
fuzz_config_yaml fuzz_topology_yaml fuzz_worker_spec fuzz_local_state}"

if [[ ! -f "$build/build.ninja" ]]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DRSTORM_FUZZ=ON -DRSTORM_SANITIZE=ON -DRSTORM_BUILD_TESTS=OFF
fi
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
artifacts="$build/fuzz-artifacts"
# A failed check or a UBSan report stops the run like an ASan report does;
# ubsan.supp names the third-party faults that are not ours.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=$root/fuzz/ubsan.supp
export ASAN_OPTIONS=detect_leaks=1

failed=0
printf '%-20s %10s %8s %9s\n' target inputs crashes seconds
for target in "${targets[@]}"; do
  mkdir -p "$work/$target"
  cp -r "$root/fuzz/corpus/$target" "$work/$target/corpus"
  start=$SECONDS
  status=0
  "$build/bin/$target" -runs="$runs" -max_total_time="$max_seconds" -timeout="$timeout" \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/$target/" \
    "$work/$target/corpus" > "$work/$target/log" 2>&1 || status=$?
  inputs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$target/log" | tail -n 1)
  found=$(find "$work/$target" -maxdepth 1 -type f \
    \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  if [[ $status -ne 0 && $found -eq 0 ]]; then found=1; fi
  printf '%-20s %10s %8s %9s\n' "$target" "${inputs:-?}" "$found" "$((SECONDS - start))"
  if [[ $found -ne 0 ]]; then
    failed=1
    mkdir -p "$artifacts/$target"
    cp "$work/$target/log" "$artifacts/$target/"
    find "$work/$target" -maxdepth 1 -type f ! -name log -exec cp {} "$artifacts/$target/" \;
    echo "  $target failed (exit $status); log and input in $artifacts/$target/:"
    grep -m 5 -E 'ERROR|runtime error|fuzz check failed|Test unit written' \
      "$work/$target/log" | sed 's/^/    /' || true
  fi
done
exit "$failed"
