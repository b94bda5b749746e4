#!/usr/bin/env bash
# Recovery time with checkpoints: the stateful word count (examples/word_count, endless input,
# topology.state.checkpointing=true, checkpoints every second, kept by nimbus) on
# `rstorm dev-cluster` (3 supervisors, the topology in 3 workers). Each run waits for a new
# complete checkpoint, then kills a random worker of the topology with SIGKILL and prints
#   restored  the time from the kill until every worker of the new recovery epoch logged
#             "restored checkpoint" (the state is back)
#   resumed   the time from the kill until every executor of `count` (the stateful counter at
#             the end of the pipeline) received its first tuple after the restore (the
#             topology processes again, end to end)
# and the medians over the runs. Times come from the workers' log lines (ms).
#
# Kills are --spacing seconds apart: a supervisor treats a worker that dies within 60 s of its
# start as a crash loop and backs off before starting it again (1 s, 2 s, ...), and every
# worker starts anew at each recovery.
#
# Usage: bench/checkpoint/recovery.sh [--build DIR] [--runs N] [--spacing SECS] [--bound SECS] [--keep]
#   --build DIR    build tree with bin/rstorm* and lib/libstateful_word_count.so (default: build)
#   --runs N       kills (default 5)
#   --spacing SECS from one recovery to the next kill (default 65; 0 shows the back-off)
#   --bound SECS   how long one recovery may take before it counts as failed (default 60)
#   --keep         keep the dev cluster's work dir (logs)
# Exit status: 0 when every recovery finished within the bound, 1 otherwise, 2 bad usage.
set -u

build=build runs=5 spacing=65 bound=60 keep=0
usage() { sed -n '17,23p' "$0" | sed 's/^# \{0,1\}//'; }
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --spacing) spacing=$2; shift 2 ;;
    --bound) bound=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "recovery.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
r=$build/bin/rstorm
lib=$build/lib/libstateful_word_count.so
[ -x "$r" ] || { echo "recovery.sh: no $r: build it first" >&2; exit 2; }
[ -f "$lib" ] || { echo "recovery.sh: no $lib" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rstorm-recovery.XXXXXX")
work=$tmp/work conf=$tmp/work/rstorm.yaml
dc_pid="" failures=0
now_ms() { date +%s%3N; }
secs() { awk -v ms="$1" 'BEGIN { printf "%.2f", ms / 1000 }'; }
cleanup() {
  if [ -n "$dc_pid" ]; then
    kill -INT "$dc_pid" 2>/dev/null
    for _ in $(seq 1 120); do kill -0 "$dc_pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$dc_pid" 2>/dev/null
  fi
  if ((keep || failures)); then echo "logs kept in $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

setsid "$r" dev-cluster --work-dir "$work" >"$tmp/dc.log" 2>&1 &
dc_pid=$!
for _ in $(seq 1 120); do grep -qs "up in" "$tmp/dc.log" && break; sleep 0.5; done
grep -q "up in" "$tmp/dc.log" || { echo "dev-cluster did not come up: $(tail -n 3 "$tmp/dc.log")"; failures=1; exit 1; }
"$r" submit "$lib" --name swc --wait --config "$conf" -c topology.state.checkpointing=true \
  -c wordcount.report.print=false -c topology.worker.max.heap.size.mb=400 >"$tmp/submit.log" 2>&1 ||
  { echo "submit failed: $(tail -n 3 "$tmp/submit.log")"; failures=1; exit 1; }

# The last complete checkpoint's "<id> <epoch>", or nothing.
last_checkpoint() {
  "$r" describe swc --config "$conf" 2>/dev/null |
    sed -nE 's/^Checkpoints: last complete ([0-9]+) \(recovery epoch ([0-9]+)\).*/\1 \2/p'
}
# Log lines matching $1 in every worker log, as "<ms since the epoch> <line>".
stamped() {
  cat "$work"/supervisor-*/workers/*/worker.log 2>/dev/null | grep -a -- "$1" |
    while IFS= read -r line; do
      ts=${line:1:23}
      echo "$(date -d "$ts" +%s%3N) $line"
    done
}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

echo "stateful word count on dev-cluster, $runs kill -9 of a random worker"
printf '%-5s %-8s %-10s %-10s %s\n' run epoch restored resumed checkpoint
restored_all=() resumed_all=()
seen=0 prev_epoch=-1 recovered_at=0
for run in $(seq 1 "$runs"); do
  # A new checkpoint, of the epoch the last kill started, first.
  deadline=$(($(date +%s) + bound))
  while :; do
    read -r id e <<<"$(last_checkpoint)"
    [ -n "${id:-}" ] && ((e > prev_epoch && id > seen)) && break
    (($(date +%s) > deadline)) && { echo "run $run: no new checkpoint within ${bound}s"; failures=1; exit 1; }
    sleep 0.2
  done
  seen=$id prev_epoch=$e
  while (($(date +%s) < recovered_at + spacing)); do sleep 1; done
  placement=$("$r" describe swc --config "$conf")
  workers=$(grep -c "^      worker " <<<"$placement")
  counters=$(grep -o "count\[[0-9-]*\]" <<<"$placement" | wc -l)
  pids=($(pgrep -f "rstorm-worker --spec $work/.*/workers/swc-"))
  victim=${pids[RANDOM % ${#pids[@]}]}
  t0=$(now_ms)
  kill -KILL "$victim"
  deadline=$(($(date +%s) + bound))
  restored_ms="" resumed_ms=""
  while (($(date +%s) <= deadline)); do
    restored=$(stamped "restored checkpoint" | awk -v t0="$t0" '$1 >= t0')
    resumed=$(stamped "component=count .*first tuple after restoring" | awk -v t0="$t0" '$1 >= t0')
    if (($(grep -c . <<<"$restored") >= workers)) && (($(grep -c . <<<"$resumed") >= counters)); then
      restored_ms=$(($(cut -d' ' -f1 <<<"$restored" | sort -n | tail -1) - t0))
      resumed_ms=$(($(cut -d' ' -f1 <<<"$resumed" | sort -n | tail -1) - t0))
      break
    fi
    sleep 0.2
  done
  if [ -z "$restored_ms" ]; then
    echo "run $run: not recovered within ${bound}s (workers restored: $(grep -c . <<<"$restored") of $workers, counters resumed: $(grep -c . <<<"$resumed") of $counters)"
    failures=1
    exit 1
  fi
  checkpoint=$(grep -o "restoring checkpoint [0-9]*\|restored checkpoint [0-9]*" <<<"$restored" | head -1 | grep -o "[0-9]*$")
  printf '%-5s %-8s %-10s %-10s %s\n' "$run" "$((e + 1))" "$(secs "$restored_ms")s" "$(secs "$resumed_ms")s" "$checkpoint"
  restored_all+=("$restored_ms") resumed_all+=("$resumed_ms")
  recovered_at=$(date +%s)
done
echo "median of $runs: restored $(secs "$(printf '%s\n' "${restored_all[@]}" | median)")s," \
  "resumed $(secs "$(printf '%s\n' "${resumed_all[@]}" | median)")s (kill -9 to the first tuple" \
  "every counter received after the restore)"
