#!/usr/bin/env bash
# Chaos bench: the word count (examples/word_count, bounded by wordcount.sentences.limit,
# topology.max.spout.pending=1000) on `rstorm dev-cluster --nimbuses 2 --supervisors 3
# --racks 2`, and one kill -9 per trial: a worker (the spout's), a supervisor with its
# workers (the spout's), the leading nimbus, or ZooKeeper (restarted after --zk-down s);
# or, kind `rebalance`, no kill: `rstorm rebalance -e split=1 -w 0`, then back to split=2.
# The acked-sentences total is sampled every 0.5 s from the workers' /metrics; per kill it
# prints (a) the time from the kill to the first new ack and (b) the time until the ack
# rate is back to half its pre-kill level, then checks that every sentence was acked, that
# the report bolt's final counts are not below the true ones, and that stopping dev-cluster
# leaves no process. Each trial has its own dev cluster. Prints medians per kind.
# bench/chaos/README.md says what is verified and what is not.
#
# Usage: bench/chaos/run.sh [--build DIR] [--runs N] [--kinds worker,supervisor,nimbus,zookeeper,rebalance]
#                           [--short] [--bound SECS] [--zk-down SECS] [--sentences N] [--keep]
#   --build DIR    build tree with bin/rstorm* and lib/libword_count.so (default: build); the
#                  binaries are copied first, so a rebuild during the bench does not matter
#   --runs N       trials per kind (default 3)
#   --short        one worker-kill trial, for CI (about 60-90 s)
#   --bound SECS   how long to wait for a recovery (default 60)
#   --zk-down SECS ZooKeeper stays down this long before the bench restarts it (default 10)
#   --sentences N  wordcount.sentences.limit (default: 45 s of the rate measured at start)
#   --keep         keep the work dirs (logs) even when nothing failed
# Exit status: 0 when every check passed, 1 when a FAILURE line was printed, 2 bad usage.
set -u

build=build runs=3 short=0 bound=60 zk_down=10 sentences=0 keep=0
kinds="worker,supervisor,nimbus,zookeeper,rebalance"
usage() { sed -n '14,25p' "$0" | sed 's/^# \{0,1\}//'; }
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --kinds) kinds=$2; shift 2 ;;
    --short) short=1; shift ;;
    --bound) bound=$2; shift 2 ;;
    --zk-down) zk_down=$2; shift 2 ;;
    --sentences) sentences=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "run.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
warm=8 fill_secs=45  # seconds of traffic before the kill; seconds of input (rate x this)
if ((short)); then runs=1 kinds=worker warm=5 fill_secs=15; fi
for b in rstorm rstorm-nimbus rstorm-supervisor rstorm-worker rstorm-ui; do
  [ -x "$build/bin/$b" ] || { echo "run.sh: no $build/bin/$b: build it first" >&2; exit 2; }
done
[ -f "$build/lib/libword_count.so" ] || { echo "run.sh: no $build/lib/libword_count.so" >&2; exit 2; }

bench_start=$(date +%s)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rstorm-chaos.XXXXXX")
snap=$tmp/snap
mkdir -p "$snap/bin" "$snap/lib"
cp "$build"/bin/{rstorm,rstorm-nimbus,rstorm-supervisor,rstorm-worker,rstorm-ui} "$snap/bin/" &&
  cp -P "$build"/lib/librstorm-api.so* "$build"/lib/libword_count.so "$snap/lib/" ||
  { echo "run.sh: copying the binaries failed" >&2; exit 2; }
# The binaries' RUNPATH names the build tree; LD_LIBRARY_PATH wins over it, and dev-cluster,
# supervisors and workers inherit it (dev-cluster runs the daemons next to its own binary).
export LD_LIBRARY_PATH=$snap/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
r=$snap/bin/rstorm
wclib=$snap/lib/libword_count.so
failures=0
dc_pid="" sampler_pid="" extra_pids=()

say() { echo "$*"; }
fail() { echo "FAILURE: $*"; failures=$((failures + 1)); }
now_ms() { date +%s%3N; }
secs() { awk -v ms="$1" 'BEGIN { printf "%.1f", ms / 1000 }'; }

cleanup() {
  [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null
  [ -n "$dc_pid" ] && stop_cluster quiet
  rm -rf "$snap"
  if ((failures == 0 && keep == 0)); then rm -rf "$tmp"; else echo "logs kept in $tmp"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- dev cluster ---------------------------------------------------------------------------

# start_cluster DIR: sets work, conf, dc_pid, zk_pid, zk_port, sup_pid[], nimbus_pid[port].
start_cluster() {
  work=$1/work conf=$1/work/rstorm.yaml
  setsid "$r" dev-cluster --work-dir "$work" --nimbuses 2 --supervisors 3 --racks 2 >"$1/dc.log" 2>&1 &
  dc_pid=$!
  for _ in $(seq 1 60); do grep -qs "up in" "$1/dc.log" && break; kill -0 "$dc_pid" 2>/dev/null || break; sleep 0.5; done
  grep -q "up in" "$1/dc.log" || { fail "dev-cluster did not come up: $(tail -n 3 "$1/dc.log")"; return 1; }
  zk_pid=$(awk '$1 == "zookeeper" { print $4 }' "$1/dc.log")
  zk_port=$(awk '$1 == "zookeeper" { sub(/.*:/, "", $2); print $2 }' "$1/dc.log")
  unset sup_pid nimbus_pid; declare -gA sup_pid nimbus_pid
  while read -r name _ _ _ _ pid; do sup_pid[$name]=$pid; done < <(awk '$1 ~ /^supervisor-/ { print $1, $2, $3, $4, $5, $7 }' "$1/dc.log")
  while read -r port pid; do nimbus_pid[$port]=$pid; done < <(awk '$1 ~ /^nimbus-/ { sub(/.*:/, "", $2); print $2, $4 }' "$1/dc.log")
}

# Processes of this work dir still running (pid and command line).
work_processes() { pgrep -af -- "$work/" | grep -E "^[0-9]+ ($snap/bin/rstorm-(worker|supervisor|nimbus|ui) |[^ ]*java .*zookeeper)"; }

# stop_cluster [quiet]: Ctrl-C to dev-cluster, then lists whatever of the work dir is left.
stop_cluster() {
  local t0 left
  t0=$(now_ms)
  kill -INT "$dc_pid" 2>/dev/null
  for _ in $(seq 1 120); do kill -0 "$dc_pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$dc_pid" 2>/dev/null; then
    [ "${1:-}" = quiet ] || fail "dev-cluster did not exit within 60 s of Ctrl-C"
    kill -KILL "$dc_pid" 2>/dev/null
  fi
  wait "$dc_pid" 2>/dev/null
  dc_pid=""
  stop_ms=$(($(now_ms) - t0))
  sleep 1
  left=$(work_processes)
  for p in "${extra_pids[@]}"; do  # ZooKeeper restarted by this bench: not dev-cluster's to stop
    if kill -0 "$p" 2>/dev/null; then
      left=$(grep -v "^$p " <<<"$left"); kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null
    fi
  done
  extra_pids=()
  leftovers=0
  if [ -n "$left" ]; then
    while read -r pid cmd; do
      [ "${1:-}" = quiet ] || fail "left running after dev-cluster stopped: pid $pid ${cmd:0:160}"
      leftovers=$((leftovers + 1))
      kill -KILL "$pid" 2>/dev/null
    done <<<"$left"
  fi
}

# ---- sampling ------------------------------------------------------------------------------

# Every 0.5 s: scrape each worker of topology $(cat $1/topo) and append to $1/samples
#   t_ms cum raw pending failed spout_port        (t_ms: when the scrape ended)
# cum: acked sentences since the start, counting a restarted worker's counter from 0; raw:
# the acked counter of the spout as it is now (resets when its worker restarts). After a
# sample, runs $1/kill.req if present and appends "KILL t_ms".
sampler() {
  local d=$1 t0 next rem topo line spec dir port name exec v key cum=0 raw pend failed sport
  declare -A last
  while :; do
    t0=$(now_ms)
    topo=$(cat "$d/topo" 2>/dev/null)
    raw=0 pend=0 failed=0 sport=-
    while read -r _ _ _ spec; do
      dir=${spec%/spec.json}; port=${dir##*-}
      while read -r name exec v; do
        case $name in
          rstorm_tuples_acked_total)
            key=$port/$exec; v=${v%.*}
            if [ -z "${last[$key]:-}" ] || ((v < last[$key])); then cum=$((cum + v)); else cum=$((cum + v - last[$key])); fi
            last[$key]=$v; raw=$((raw + v)); sport=$port ;;
          rstorm_spout_pending_tuples) pend=$((pend + ${v%.*})) ;;
          rstorm_tuples_failed_total) failed=$((failed + ${v%.*})) ;;
        esac
      done < <(curl -s -m 1 "127.0.0.1:$((port + 1000))/metrics" |
        sed -nE 's/^(rstorm_tuples_acked_total|rstorm_tuples_failed_total|rstorm_spout_pending_tuples)\{[^}]*component="sentences"[^}]*executor="([0-9]+)"[^}]*\} ([0-9.e+]+)$/\1 \2 \3/p')
    done < <([ -n "$topo" ] && pgrep -af -- "^$snap/bin/rstorm-worker --spec $work/supervisor-[0-9]+/workers/$topo-[0-9]+/spec.json")
    echo "$(now_ms) $cum $raw $pend $failed $sport" >>"$d/samples"
    if [ -f "$d/kill.req" ]; then
      echo "KILL $(now_ms)" >>"$d/samples"
      bash "$d/kill.req" >>"$d/kill.log" 2>&1
      mv "$d/kill.req" "$d/kill.done"
    fi
    next=$((t0 + 500)); rem=$((next - $(now_ms)))
    ((rem > 0)) && sleep "$(printf '0.%03d' "$rem")"
  done
}

last_sample() { grep -v '^KILL' "$1/samples" 2>/dev/null | tail -n 1; }

# rate_over D SECS: acked sentences per second over the last SECS seconds of samples.
rate_over() {
  grep -v '^KILL' "$1/samples" | awk -v w="$2" '{ t[NR] = $1; c[NR] = $2 }
    END { if (NR < 2) { print 0; exit } i = NR; while (i > 1 && t[NR] - t[i - 1] <= w * 1000) i--;
          print (t[NR] > t[i] ? int((c[NR] - c[i]) * 1000 / (t[NR] - t[i])) : 0) }'
}

# recovery D: "kill_ms pre_rate a_ms b_ms dip_ms" from the samples (a, b: -1 = not yet).
# pre_rate: over the 3 s before the kill; a: first sample after the kill whose total is above
# the total at the kill; b: end of the first 0.5-s interval after the kill at >= pre_rate/2;
# dip_ms: time after b spent in intervals below pre_rate/2 while the input was not exhausted.
recovery() {
  awk -v limit="$sentences" '
    $1 == "KILL" { tk = $2; k = n; next }
    { t[++n] = $1; c[n] = $2; raw[n] = $3 }
    END {
      if (!tk) { print "0 0 -1 -1 0"; exit }
      i = k; while (i > 1 && t[k] - t[i - 1] <= 3000) i--;
      pre = (t[k] > t[i]) ? (c[k] - c[i]) * 1000 / (t[k] - t[i]) : 0
      a = -1; b = -1; dip = 0
      for (j = k + 1; j <= n; j++) {
        if (a < 0 && c[j] > c[k]) a = t[j] - tk
        r = (c[j] - c[j - 1]) * 1000 / (t[j] - t[j - 1])
        if (b < 0) { if (r >= pre / 2 && pre > 0) b = t[j] - tk }
        else if (r < pre / 2 && raw[j] < limit) dip += t[j] - t[j - 1]
      }
      printf "%d %d %d %d %d\n", tk, pre, a, b, dip
    }' "$1/samples"
}

# ---- the word count ------------------------------------------------------------------------

# expected_counts L: "word count" for the first L sentences of the spout (ids 0..L-1, id % 5).
expected_counts() {
  awk -v L="$1" 'BEGIN {
    s[0] = "the cow jumped over the moon"; s[1] = "an apple a day keeps the doctor away"
    s[2] = "four score and seven years ago"; s[3] = "snow white and the seven dwarfs"
    s[4] = "i am at two with nature"
    for (k = 0; k < 5; k++) { n = int(L / 5) + (k < L % 5); m = split(s[k], w, " ")
      for (x = 1; x <= m; x++) cnt[w[x]] += n }
    for (w1 in cnt) print w1, cnt[w1] }'
}

# check_counts D TOPO: compares the report bolt's last "word count report" line (printed by
# cleanup on an orderly stop) with expected_counts; prints a summary, FAILURE when below.
check_counts() {
  local line words exp below=""
  line=$(for f in "$work"/supervisor-*/workers/"$2"-*/worker.log; do
    [ -f "$f" ] && awk '/^\[20/ { ts = substr($0, 2, 23) } /^word count report:/ { print ts "|" $0 }' "$f"
  done | sort | tail -n 1 | cut -d'|' -f2-)
  if [ -z "$line" ]; then fail "$kind run $run: no 'word count report' line in the topology's worker logs"; return; fi
  exp=$(expected_counts "$sentences")
  words=$(sed -nE 's/^word count report: ([0-9]+) distinct words.*/\1/p' <<<"$line")
  while read -r w n; do
    e=$(awk -v w="$w" '$1 == w { print $2 }' <<<"$exp")
    [ -n "$e" ] && ((n < e)) && below+=" $w=$n<$e"
  done < <(sed -E 's/.*top: //; s/, /\n/g; s/=/ /g' <<<"$line")
  checked=$(sed -E 's/.*top: //' <<<"$line" | tr ',' '\n' | wc -l)
  if [ -n "$below" ]; then
    fail "$kind run $run: counts below their true value:$below ($line)"
  elif [ "$words" != 27 ]; then
    fail "$kind run $run: $words distinct words reported, 27 expected ($line)"
  else
    say "    counts: 27 distinct words; the $checked reported (top) counts are >= their true values ($(sed -E 's/.*top: ([^,]*, [^,]*),.*/\1/' <<<"$line"); true the=$(awk '$1 == "the" { print $2 }' <<<"$exp"))"
  fi
}

submit() {  # submit NAME [-c k=v ...]: prints the topology id
  local name=$1 out; shift
  out=$(timeout 150 "$r" submit "$wclib" --name "$name" --wait --config "$conf" \
    -c topology.max.spout.pending=1000 -c wordcount.report.print=true "$@" 2>&1) ||
    { echo "submit failed: $out" >&2; return 1; }
  sed -nE "s/^submitted topology '[^']*' as ([^ ]+)$/\1/p" <<<"$out"
}

# cluster_json FIELD: leader port, or the number of supervisors, from `rstorm cluster --json`.
cluster_json() {
  timeout 5 "$r" cluster --json --config "$conf" 2>/dev/null | python3 -c '
import json, sys
try: c = json.load(sys.stdin)
except Exception: sys.exit(0)
if sys.argv[1] == "leader": print(" ".join(str(n["port"]) for n in c.get("nimbuses", []) if n.get("leader")))
else: print(" ".join(s["id"] for s in c.get("supervisors", [])))' "$1"
}

# topology_state TOPO: status, reason, stall and failing workers as `rstorm describe` says.
topology_state() {
  timeout 5 "$r" describe "$1" --json --config "$conf" 2>/dev/null |
    python3 -c 'import json, sys
try: t = json.load(sys.stdin)["topology"]
except Exception: print("describe failed"); sys.exit(0)
print("status %s%s; stall: %s; failing workers: %s" % (t.get("status"), (" (" + t["status_reason"] + ")") if t.get("status_reason") else "",
      json.dumps(t.get("stall")), json.dumps(t.get("failing_workers"))))'
}

# nodes_of TOPO: the supervisors that `rstorm describe` places executors on.
nodes_of() {
  timeout 5 "$r" describe "$1" --json --config "$conf" 2>/dev/null |
    python3 -c 'import json, sys
try: print(" ".join(sorted({e["node"] for e in json.load(sys.stdin)["executors"]})))
except Exception: print("?")'
}

# split_executors TOPO: the executors `rstorm describe` places for split ("?": no answer).
split_executors() {
  timeout 5 "$r" describe "$1" --json --config "$conf" 2>/dev/null |
    python3 -c 'import json, sys
try: print(sum(1 for e in json.load(sys.stdin)["executors"] if e["component"] == "split"))
except Exception: print("?")'
}

zk_ok() ( exec 3<>"/dev/tcp/127.0.0.1/$zk_port" 2>/dev/null || exit 1; printf ruok >&3; read -r -t 2 a <&3; [ "$a" = imok ] )

calibrate() {  # measures the rate of the unbounded word count for 4 s, then kills it
  local d=$tmp/calibration id rate
  mkdir -p "$d"
  id=$(submit calibration) || { fail "calibration submit failed"; return 1; }
  echo "$id" >"$d/topo"
  sampler "$d" & sampler_pid=$!
  sleep 3; : >"$d/samples"; sleep 4.2
  rate=$(rate_over "$d" 4)
  kill "$sampler_pid"; wait "$sampler_pid" 2>/dev/null; sampler_pid=""
  timeout 60 "$r" kill calibration --wait 0 --config "$conf" >/dev/null 2>&1
  for _ in $(seq 1 40); do pgrep -f -- "^$snap/bin/rstorm-worker --spec $work/.*/$id-" >/dev/null || break; sleep 0.5; done
  sentences=$((rate * fill_secs))
  ((sentences < 200000)) && sentences=200000
  say "calibration: $rate sentences/s acked; wordcount.sentences.limit=$sentences ($fill_secs s of input)"
}

# ---- one trial -----------------------------------------------------------------------------

# rebalance_step D ID TARGET NAME: right after a sample, `rstorm rebalance chaos-rebalance -e
# split=TARGET -w 0`; then waits for the new placement and the acks. Appends "NAME RUN a b" to
# results, both from the command: a, the first sample with an ack by the spout's worker as it runs
# after the rebalance (a new process when the spout's worker changed, as it holds split; else the
# first ack after describe shows TARGET split executors); b, the end of the first interval after
# that change whose ack rate is half the rate before the command (the old worker acks until it
# stops, so recovery()'s figure would flatter).
rebalance_step() {
  local d=$1 id=$2 target=$3 name=$4 t0 since placed="" pid_before pid_now port new_worker="" pre dip
  local s a_ms=-1 b=-1
  port=$(awk '{ print $6 }' <<<"$(last_sample "$d")")
  pid_before=$(pgrep -f -- "^$snap/bin/rstorm-worker --spec $work/supervisor-[0-9]+/workers/$id-$port/" | head -n 1)
  rm -f "$d/kill.done"
  echo "timeout 60 $r rebalance chaos-rebalance -e split=$target -w 0 --config $conf" >"$d/kill.req"
  for _ in $(seq 1 40); do [ -f "$d/kill.done" ] && break; sleep 0.25; done
  t0=$(awk '$1 == "KILL" { t = $2 } END { print t }' "$d/samples")
  while :; do
    sleep 0.5
    since=$(($(now_ms) - t0))
    if [ -z "$placed" ] && [ "$(split_executors "$id")" = "$target" ]; then placed=$(now_ms); fi
    if [ -z "$new_worker" ]; then
      s=$(last_sample "$d"); port=$(awk '{ print $6 }' <<<"$s")
      pid_now=$(pgrep -f -- "^$snap/bin/rstorm-worker --spec $work/supervisor-[0-9]+/workers/$id-$port/" | head -n 1)
      [ -n "$pid_now" ] && [ "$pid_now" != "$pid_before" ] && new_worker=$(now_ms)
    fi
    # From the change (a new spout worker, else the new placement): the first sample with an
    # ack (a) and the end of the first interval at half the rate before the command (b).
    local from=${new_worker:-}
    [ -z "$from" ] && [ -n "$placed" ] && ((since > 15000)) && from=$placed
    read -r _ pre _ _ dip <<<"$(recovery "$d")"
    if [ -n "$from" ] && ((a_ms < 0 || b < 0)); then
      read -r a_ms b <<<"$(grep -v '^KILL' "$d/samples" | awk -v from="$from" -v t0="$t0" -v pre="$pre" '
        { if (n && $1 > from) { if (a < 0 && $3 > 0) a = $1 - t0
            if (b < 0 && ($2 - c) * 1000 / ($1 - t) >= pre / 2 && pre > 0 && t >= from) b = $1 - t0 }
          n++; t = $1; c = $2 }
        BEGIN { a = -1; b = -1 } END { print a, b }')"
    fi
    ((since > bound * 1000)) && break
    ((a_ms >= 0 && b >= 0 && since > b + 10000)) && break
  done
  echo "$name $run $a_ms $b" >>"$tmp/results"
  say "    split -> $target: rstorm rebalance -w 0 at $pre sentences/s acked; describe shows $target split executors after $([ -n "$placed" ] && secs $((placed - t0)) || echo "- (not within $bound s)") s; $([ -n "$new_worker" ] && echo "the spout's worker restarted (it holds split)" || echo "the spout's worker kept its process")"
  say "    first ack at the new parallelism after $( ((a_ms < 0)) && echo "- (none within $bound s)" || echo "$(secs "$a_ms") s"); ack rate back to half after $( ((b < 0)) && echo "- (none within $bound s)" || echo "$(secs "$b") s")$( ((dip > 0)) && echo "; later below half for $(secs "$dip") s")"
  [ -z "$placed" ] && fail "rebalance run $run: describe never showed $target split executors"
  ((a_ms < 0 || b < 0)) && fail "rebalance run $run: split=$target: no acks at the new parallelism within $bound s"
}

# trial KIND RUN: appends "KIND RUN a_ms b_ms" to $tmp/results (-1: no recovery within bound).
trial() {
  kind=$1 run=$2
  local d=$tmp/$kind-$run id s spout_port spout_sup killed_what workers_before workers_after
  local t_kill rec pre a b dip t_end elapsed leader="" new_leader="" gone="" replaced="" sups=""
  local zk_new="" zk_up="" cp_up="" t_restart=0 since mid_state=""
  mkdir -p "$d"
  start_cluster "$d" || return
  ((sentences == 0)) && { calibrate || { stop_cluster; return; }; }
  id=$(submit "chaos-$kind" -c wordcount.sentences.limit="$sentences") || { fail "$kind run $run: submit failed"; stop_cluster; return; }
  echo "$id" >"$d/topo"
  sampler "$d" & sampler_pid=$!
  sleep "$warm"
  s=$(last_sample "$d"); spout_port=$(awk '{ print $6 }' <<<"$s")
  [ "$spout_port" = - ] && { fail "$kind run $run: no spout metrics after $warm s"; kill "$sampler_pid"; sampler_pid=""; stop_cluster; return; }
  spout_sup=$(pgrep -af -- "^$snap/bin/rstorm-worker --spec $work/supervisor-[0-9]+/workers/$id-$spout_port/" | sed -nE 's#.*/(supervisor-[0-9]+)/workers/.*#\1#p' | head -n 1)
  workers_before=$(pgrep -f -- "^$snap/bin/rstorm-worker --spec $work/.*/$id-" | sort | tr '\n' ' ')
  case $kind in
    worker)
      killed_what="the spout's worker ($spout_sup:$spout_port)"
      echo "kill -9 \$(pgrep -f -- '^$snap/bin/rstorm-worker --spec $work/$spout_sup/workers/$id-$spout_port/')" >"$d/kill.req" ;;
    supervisor)
      killed_what="$spout_sup (pid ${sup_pid[$spout_sup]}) and its workers $(pgrep -f -- "^$snap/bin/rstorm-worker --spec $work/$spout_sup/" | tr '\n' ' ')"
      echo "kill -9 ${sup_pid[$spout_sup]} \$(pgrep -f -- '^$snap/bin/rstorm-worker --spec $work/$spout_sup/')" >"$d/kill.req" ;;
    nimbus)
      leader=$(cluster_json leader)
      [ -z "$leader" ] && { fail "nimbus run $run: rstorm cluster --json names no leader"; kill "$sampler_pid"; sampler_pid=""; stop_cluster; return; }
      killed_what="the leading nimbus (127.0.0.1:$leader, pid ${nimbus_pid[$leader]})"
      echo "kill -9 ${nimbus_pid[$leader]}" >"$d/kill.req" ;;
    zookeeper)
      mapfile -d '' -t zk_cmd <"/proc/$zk_pid/cmdline"
      sups=$(cluster_json supervisors)
      killed_what="ZooKeeper (pid $zk_pid), restarted after $zk_down s"
      echo "kill -9 $zk_pid" >"$d/kill.req" ;;
    rebalance)
      killed_what="nothing: rebalance split 2 -> 1 -> 2"
      say "  rebalance run $run: split 2 -> 1 -> 2 while the word count runs"
      rebalance_step "$d" "$id" 1 rebalance-down
      rebalance_step "$d" "$id" 2 rebalance-up ;;
  esac
  if [ "$kind" != rebalance ]; then
  for _ in $(seq 1 20); do [ -f "$d/kill.done" ] && break; sleep 0.25; done
  t_kill=$(awk '$1 == "KILL" { print $2 }' "$d/samples")
  while :; do
    sleep 0.5
    since=$(($(now_ms) - t_kill))
    read -r _ pre a b dip <<<"$(recovery "$d")"
    case $kind in
      nimbus) if [ -z "$new_leader" ]; then s=$(cluster_json leader); [ -n "$s" ] && [ "$s" != "$leader" ] && new_leader="$s after $(secs "$since") s"; fi ;;
      supervisor)
        if [ -z "$mid_state" ] && ((since >= 12000)); then mid_state="$(topology_state "$id") at $(secs "$since") s"; fi
        if [ -z "$gone" ]; then grep -qw "$spout_sup" <<<"$(cluster_json supervisors)" || gone=$(secs "$since"); fi
        if [ -z "$replaced" ]; then s=$(nodes_of "$id"); [ "$s" != "?" ] && ! grep -qw "$spout_sup" <<<"$s" && replaced=$(secs "$since"); fi ;;
      zookeeper)
        if ((t_restart == 0 && since >= zk_down * 1000)); then
          setsid "${zk_cmd[@]}" >>"$work/zookeeper/zookeeper.log" 2>&1 </dev/null &
          zk_new=$!; extra_pids+=("$zk_new"); t_restart=$(now_ms)
        fi
        if ((t_restart > 0)); then
          [ -z "$zk_up" ] && zk_ok 2>/dev/null && zk_up=$(secs $(($(now_ms) - t_restart)))
          [ -n "$zk_up" ] && [ -z "$cp_up" ] && [ "$(cluster_json supervisors)" = "$sups" ] && [ -n "$(cluster_json leader)" ] &&
            [ "$(nodes_of "$id")" != "?" ] && cp_up=$(secs $(($(now_ms) - t_restart)))
        fi ;;
    esac
    ((since > bound * 1000)) && break
    ((b < 0)) && continue
    case $kind in
      nimbus) [ -n "$new_leader" ] && ((since > b + 10000)) && break ;;
      supervisor) [ -n "$gone" ] && [ -n "$replaced" ] && ((since > b + 10000)) && break ;;
      zookeeper) [ -n "$cp_up" ] && (($(now_ms) - t_restart > 20000)) && break ;;
      *) ((since > b + 10000)) && break ;;
    esac
  done
  read -r _ pre a b dip <<<"$(recovery "$d")"
  workers_after=$(pgrep -f -- "^$snap/bin/rstorm-worker --spec $work/.*/$id-" | sort | tr '\n' ' ')
  echo "$kind $run $a $b" >>"$tmp/results"
  say "  $kind run $run: killed $killed_what at $pre sentences/s acked"
  say "    first new ack after $( ((a < 0)) && echo "- (no recovery within $bound s)" || echo "$(secs "$a") s"); ack rate back to half after $( ((b < 0)) && echo "- (no recovery within $bound s)" || echo "$(secs "$b") s")$( ((dip > 0)) && echo "; later below half for $(secs "$dip") s")"
  ((a < 0 || b < 0)) && fail "$kind run $run: no recovery within $bound s"
  case $kind in
    nimbus) say "    rstorm cluster names the new leader: ${new_leader:-never within $bound s}" ;;
    supervisor) say "    $spout_sup gone from rstorm cluster after ${gone:--} s; describe shows no executor on it after ${replaced:--} s"
      say "    rstorm describe during the outage: ${mid_state:--}" ;;
    zookeeper) say "    ZooKeeper answers ruok ${zk_up:--} s after its restart; cluster/describe complete again after ${cp_up:-- (not within the bound)} s" ;;
  esac
  [ "$kind" = nimbus ] || [ "$kind" = zookeeper ] &&
    [ "$workers_before" != "$workers_after" ] && say "    NOTE: worker processes changed although no worker died: before [$workers_before] after [$workers_after]"
  fi
  # Every sentence acked: the spout's current counter reaches the limit with nothing pending.
  local last_raw=-1 last_change t_now raw pend failed
  last_change=$(now_ms)
  while :; do
    read -r _ _ raw pend failed _ <<<"$(last_sample "$d")"
    t_now=$(now_ms)
    ((raw != last_raw)) && { last_raw=$raw; last_change=$t_now; }
    ((raw >= sentences && pend == 0)) && break
    ((t_now - last_change > 60000)) && break
    sleep 1
  done
  kill "$sampler_pid"; wait "$sampler_pid" 2>/dev/null; sampler_pid=""
  if ((raw == sentences && pend == 0)); then
    say "    every sentence acked: the spout's counter reached $raw of $sentences, 0 pending, $failed failed (replayed)"
  elif ((raw > sentences && pend == 0)); then
    say "    every sentence acked: the spout's counter reached $raw for $sentences sentences (acked twice: $((raw - sentences)))"
  else
    fail "$kind run $run: not every sentence acked: the spout's counter stopped at $raw of $sentences, $pend pending, $failed failed, no progress for 60 s"
  fi
  timeout 60 "$r" kill "chaos-$kind" --wait 0 --config "$conf" >/dev/null 2>&1 || fail "$kind run $run: rstorm kill failed"
  for _ in $(seq 1 60); do pgrep -f -- "^$snap/bin/rstorm-worker --spec $work/.*/$id-" >/dev/null || break; sleep 0.5; done
  check_counts "$d" "$id"
  stop_cluster
  say "    dev-cluster stopped in $(secs "$stop_ms") s; processes left: $leftovers"
}

# ---- dev-cluster stopped while ZooKeeper is down ---------------------------------------------

stop_with_zookeeper_down() {
  local d=$tmp/stop-zk-down id
  kind=stop-zk-down run=1
  mkdir -p "$d"
  start_cluster "$d" || return
  id=$(submit chaos-stop -c wordcount.sentences.limit=0) || { fail "stop-zk-down: submit failed"; stop_cluster; return; }
  sleep 4
  kill -9 "$zk_pid"
  sleep 1
  stop_cluster
  say "  dev-cluster stopped with ZooKeeper down (kill -9) in $(secs "$stop_ms") s; processes left: $leftovers"
}

# ---- main ----------------------------------------------------------------------------------

say "rstorm chaos bench: kinds $kinds, $runs run(s) each, bound $bound s; binaries copied from $build to $snap"
((sentences > 0)) && say "wordcount.sentences.limit=$sentences"
for run in $(seq 1 "$runs"); do
  for kind in ${kinds//,/ }; do
    case $kind in worker | supervisor | nimbus | zookeeper | rebalance) trial "$kind" "$run" ;;
      *) echo "run.sh: unknown kind '$kind'" >&2; exit 2 ;; esac
  done
done
((short)) || stop_with_zookeeper_down

echo
printf '%-15s %-28s %-28s\n' kill "(a) kill -> first new ack" "(b) kill -> half ack rate"
printf '%-15s %-28s %-28s\n' "" "median [runs], s" "median [runs], s"
for kind in $(awk '!seen[$1]++ { print $1 }' "$tmp/results" 2>/dev/null); do
  for col in 3 4; do
    vals[$col]=$(awk -v k="$kind" -v c="$col" '$1 == k { print $c }' "$tmp/results" 2>/dev/null | tr '\n' ' ')
    med[$col]=$(tr ' ' '\n' <<<"${vals[$col]}" | awk 'NF { print ($1 < 0 ? 1e12 : $1) }' | sort -g |
      awk '{ v[++n] = $1 } END { if (!n) { print "-"; exit } m = v[int((n + 1) / 2)]
        print (m >= 1e12 ? "none" : sprintf("%.1f", m / 1000)) }')
    list[$col]=$(tr ' ' '\n' <<<"${vals[$col]}" | awk 'NF { printf "%s%s", (n++ ? " " : ""), ($1 < 0 ? "none" : sprintf("%.1f", $1 / 1000)) }')
  done
  printf '%-15s %-28s %-28s\n' "$kind" "${med[3]} [${list[3]}]" "${med[4]} [${list[4]}]"
done
echo "(none: no recovery within $bound s. Samples every 0.5 s, or slower when a scrape is slow;"
echo " a sample is timed when its scrape ends, so each figure may be late by up to one interval.)"
echo "bench took $(($(date +%s) - bench_start)) s; $failures failure(s)"
((failures == 0))
