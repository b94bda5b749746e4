#!/usr/bin/env bash
# install_test.sh BUILD_DIR: what a user of an installed rstorm does, checked.
#  1. `cmake --install BUILD_DIR --prefix P`: the layout (bin, lib, include,
#     lib/cmake/rstorm, etc/rstorm, share/rstorm), no build folder in any
#     RUNPATH, then P is moved (the install is relocatable).
#  2. `rstorm new-topology demo`, configured with find_package(rstorm) against
#     the moved prefix, built, its ctest run (GoogleTest of the bolts and a
#     `rstorm local` run).
#  3. The installed `rstorm local` runs the starter library: exact sums; an
#     installed example (share/rstorm/examples/word_count) builds on its own
#     against the prefix and runs; `rstorm schedule` places an installed
#     paper topology on the installed described cluster.
#  4. The installed `rstorm dev-cluster` runs it: every number acked.
#  5. Bad input: find_package(rstorm 0.99), RSTORM_CONF_DIR without an
#     rstorm.yaml (exit 2), project names that cannot build (a C++ keyword, a
#     CMake target, a namespace in use), a wrong value in the installed
#     etc/rstorm/rstorm.yaml: each message names the version, name or file.
# Prints one line per check; exits 1 at the first failure with what it saw.
set -u
build=$(cd "$1" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rstorm-install-test.XXXXXX")
dc_pid=""
cleanup() {
  if [ -n "$dc_pid" ]; then
    kill -INT "$dc_pid" 2>/dev/null
    for _ in $(seq 1 120); do kill -0 "$dc_pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$dc_pid" 2>/dev/null
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok: $*"; }
unset LD_LIBRARY_PATH RSTORM_CONF_DIR
export HOME=$tmp/home  # no ~/.rstorm/rstorm.yaml of the machine's user
mkdir -p "$HOME"

# 1. Install, check the layout, move the prefix.
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "cmake --install $build"; }
p=$tmp/prefix
lib=$(dirname "$(find "$p" -name 'librstorm-api.so.*' -type f | head -n 1)")
[ -n "$lib" ] && [ -d "$lib" ] || fail "no librstorm-api.so.* under $p"
for f in bin/rstorm bin/rstorm-nimbus bin/rstorm-supervisor bin/rstorm-worker include/rstorm/rstorm.hpp include/rstorm/testing.hpp \
         etc/rstorm/rstorm.yaml share/rstorm/defaults.yaml share/rstorm/rstorm.yaml.example \
         share/rstorm/grafana/rstorm-dashboard.json share/rstorm/prometheus/prometheus.yml \
         share/rstorm/examples/word_count/word_count.cpp share/rstorm/examples/top_words/top_words.cpp; do
  [ -e "$p/$f" ] || fail "the install has no $f"
done
for f in rstormConfig.cmake rstormConfigVersion.cmake rstormTargets.cmake RstormTopology.cmake; do
  [ -e "$lib/cmake/rstorm/$f" ] || fail "the install has no $lib/cmake/rstorm/$f"
done
soname=$(readelf -d "$lib/librstorm-api.so" | sed -nE 's/.*SONAME.*\[(.*)\]/\1/p')
[[ $soname == librstorm-api.so.[0-9]* ]] || fail "librstorm-api's SONAME is '$soname'"
for f in "$p"/bin/* "$lib"/librstorm-api.so.*; do
  if readelf -d "$f" | grep -E 'R(UN)?PATH' | grep -qF "$build"; then
    fail "$f keeps the build folder in its RUNPATH: $(readelf -d "$f" | grep -E 'R(UN)?PATH')"
  fi
done
ok "install layout (SONAME $soname, no build folder in any RUNPATH)"
mv "$p" "$tmp/moved"
p=$tmp/moved
lib=${lib/$tmp\/prefix/$p}
version=$(cd / && "$p/bin/rstorm" version) || fail "the moved install's rstorm version: $version"
ok "moved install runs: $version"

# 1b. The installed headers compile warning-free under -Wall -Wextra, included
# as a project's own (not as system headers, which hide warnings).
printf '#include <rstorm/rstorm.hpp>\n#include <rstorm/testing.hpp>\nint main() {}\n' >"$tmp/headers.cpp"
msg=$(c++ -std=c++20 -Wall -Wextra -Werror -fsyntax-only -I"$p/include" "$tmp/headers.cpp" 2>&1) ||
  { echo "$msg"; fail "the installed headers warn under -Wall -Wextra"; }
ok "installed headers: no warning under -Wall -Wextra -Werror"

# 2. The starter project, against the moved install.
(cd "$tmp" && "$p/bin/rstorm" new-topology demo >"$tmp/new.log" 2>&1) || { cat "$tmp/new.log"; fail "rstorm new-topology demo"; }
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$tmp/demo" -B "$tmp/demo/build" "${gen[@]}" -DCMAKE_PREFIX_PATH="$p" >"$tmp/demo-configure.log" 2>&1 ||
  { cat "$tmp/demo-configure.log"; fail "configuring the starter project with find_package(rstorm)"; }
cmake --build "$tmp/demo/build" -j 2 >"$tmp/demo-build.log" 2>&1 || { cat "$tmp/demo-build.log"; fail "building the starter project"; }
ctest --test-dir "$tmp/demo/build" --output-on-failure >"$tmp/demo-ctest.log" 2>&1 || { cat "$tmp/demo-ctest.log"; fail "the starter project's ctest"; }
ok "starter project: configured with find_package(rstorm), built, $(grep -Eo '[0-9]+ tests? passed|100% tests passed, 0 tests failed out of [0-9]+' "$tmp/demo-ctest.log" | tail -n 1)"
demo_lib=$tmp/demo/build/libdemo.so
if readelf -d "$demo_lib" | grep -E 'R(UN)?PATH' | grep -qF "$build"; then
  fail "the starter library's RUNPATH names the build folder: $(readelf -d "$demo_lib" | grep -E 'R(UN)?PATH')"
fi

# 3. The installed rstorm local: sums of 1..10000 by parity.
out=$(cd / && "$p/bin/rstorm" local "$demo_lib" -c demo.numbers=10000 2>&1) || { echo "$out"; fail "rstorm local $demo_lib"; }
grep -q "demo: odd sum 25000000$" <<<"$out" && grep -q "demo: even sum 25005000$" <<<"$out" ||
  { echo "$out"; fail "rstorm local: the sums are not 25000000 (odd) and 25005000 (even)"; }
grep -Eq "numbers +emitted +10000 .*acked +10000 +failed +0 " <<<"$out" || { echo "$out"; fail "rstorm local: not 10000 acked"; }
ok "installed rstorm local: 10000 numbers acked, odd sum 25000000, even sum 25005000"

# 3b. An installed example builds as a project of its own and runs.
cmake -S "$p/share/rstorm/examples/word_count" -B "$tmp/wc" "${gen[@]}" -DCMAKE_PREFIX_PATH="$p" >"$tmp/wc-configure.log" 2>&1 ||
  { cat "$tmp/wc-configure.log"; fail "configuring the installed word_count example"; }
cmake --build "$tmp/wc" --target word_count -j 2 >"$tmp/wc-build.log" 2>&1 || { cat "$tmp/wc-build.log"; fail "building the installed word_count example"; }
out=$(cd / && "$p/bin/rstorm" local "$tmp/wc/libword_count.so" --duration 2 2>&1) || { echo "$out"; fail "rstorm local on the installed word_count example"; }
grep -Eq "sentences +emitted +[1-9][0-9]* " <<<"$out" || { echo "$out"; fail "the installed word_count example emitted no sentence"; }
ok "installed example share/rstorm/examples/word_count: built against the prefix, ran: $(grep -E 'sentences +emitted' <<<"$out" | head -n 1 | tr -s ' ')"

# 3c. The scheduler's dry run on the installed described cluster and paper topology.
out=$(cd / && "$p/bin/rstorm" schedule --cluster "$p/share/rstorm/clusters/rstorm-paper.yaml" \
      "$p/share/rstorm/examples/paper/diamond-network.yaml" 2>&1) || { echo "$out"; fail "rstorm schedule on the installed share/rstorm/clusters and examples/paper"; }
grep -q "(resource-aware): scheduled, " <<<"$out" || { echo "$out"; fail "rstorm schedule on the installed files placed nothing"; }
ok "installed rstorm schedule --cluster share/rstorm/clusters/rstorm-paper.yaml share/rstorm/examples/paper/diamond-network.yaml: $(grep -m1 ": scheduled, " <<<"$out")"

# 4. The installed dev cluster runs the starter library.
if command -v java >/dev/null && [ -e /usr/share/java/zookeeper.jar ]; then
  setsid "$p/bin/rstorm" dev-cluster --work-dir "$tmp/dc" --supervisors 1 >"$tmp/dc.log" 2>&1 &
  dc_pid=$!
  for _ in $(seq 1 240); do grep -qs "up in" "$tmp/dc.log" && break; kill -0 "$dc_pid" 2>/dev/null || break; sleep 0.5; done
  grep -q "up in" "$tmp/dc.log" || { cat "$tmp/dc.log"; fail "the installed rstorm dev-cluster did not come up"; }
  conf=$tmp/dc/rstorm.yaml
  sub=$("$p/bin/rstorm" submit "$demo_lib" --name demo --wait --config "$conf" -c demo.numbers=5000 2>&1) ||
    { echo "$sub"; fail "rstorm submit of the starter library to the installed dev cluster"; }
  acked=0
  for _ in $(seq 1 240); do
    acked=$(python3 -c 'import glob, json, sys
n = 0
for f in glob.glob(sys.argv[1] + "/dc/supervisor-*/workers/demo-*/heartbeat"):
    try: n += json.load(open(f)).get("components", {}).get("numbers", {}).get("acked", 0)
    except Exception: pass
print(n)' "$tmp")
    [ "$acked" -ge 5000 ] && break
    sleep 0.5
  done
  [ "$acked" -eq 5000 ] || fail "on the installed dev cluster the starter spout acked $acked of 5000 numbers"
  workers=$(pgrep -af -- "$p/bin/rstorm-worker" | wc -l)
  ok "installed dev cluster: submitted, $acked numbers acked ($workers worker process(es) from $p/bin)"
  kill -INT "$dc_pid"
  for _ in $(seq 1 120); do kill -0 "$dc_pid" 2>/dev/null || break; sleep 0.5; done
  dc_pid=""
else
  echo "skip: no java or /usr/share/java/zookeeper.jar, so no dev cluster (step 4)"
fi

# 5. Bad input, each named.
sed -i 's/find_package(rstorm [0-9.]* REQUIRED)/find_package(rstorm 0.99 REQUIRED)/' "$tmp/demo/CMakeLists.txt"
msg=$(cmake -S "$tmp/demo" -B "$tmp/demo/build-new" -DCMAKE_PREFIX_PATH="$p" 2>&1) && fail "find_package(rstorm 0.99) was accepted"
grep -q '"0.99"' <<<"$msg" && grep -q "version: 0\." <<<"$msg" || { echo "$msg"; fail "find_package(rstorm 0.99)'s message does not name both versions"; }
ok "find_package(rstorm 0.99): refused, naming 0.99 and the installed $(grep -Eo 'version: 0\.[0-9.]+' <<<"$msg" | head -n 1)"
msg=$(RSTORM_CONF_DIR=$tmp/nowhere "$p/bin/rstorm" list 2>&1)
rc=$?
[ "$rc" -eq 2 ] || { echo "$msg"; fail "RSTORM_CONF_DIR without an rstorm.yaml: exit $rc, not 2 (bad input)"; }
grep -qF "$tmp/nowhere/rstorm.yaml" <<<"$msg" || { echo "$msg"; fail "the message does not name $tmp/nowhere/rstorm.yaml"; }
ok "RSTORM_CONF_DIR without rstorm.yaml: $msg"
for name in class test rstorm; do
  msg=$(cd "$tmp" && "$p/bin/rstorm" new-topology "$name" 2>&1) && fail "rstorm new-topology $name was accepted: a project that cannot build"
  grep -qF "'$name' cannot name a topology project" <<<"$msg" || { echo "$msg"; fail "rstorm new-topology $name: the message does not name it"; }
  [ ! -e "$tmp/$name" ] || fail "rstorm new-topology $name wrote $tmp/$name"
done
ok "rstorm new-topology class / test / rstorm: refused, e.g. $msg"
echo "nimbus.thrift.port: not-a-port" >>"$p/etc/rstorm/rstorm.yaml"
msg=$("$p/bin/rstorm" list 2>&1) && fail "a wrong value in $p/etc/rstorm/rstorm.yaml was accepted"
grep -qF "$p/etc/rstorm/rstorm.yaml" <<<"$msg" || { echo "$msg"; fail "the message does not name the installed rstorm.yaml"; }
ok "the installed etc/rstorm/rstorm.yaml is read: $msg"
echo "PASS"
