#!/usr/bin/env bash
# deb_test.sh BUILD_DIR: the Debian packages as an operator gets them.
#  1. `cpack -G DEB` from the build folder: rstorm and rstorm-dev .deb files.
#  2. Their fields (dpkg-deb --field): names, versions, the shared libraries'
#     packages found by dpkg-shlibdeps, rstorm-dev depending on this rstorm.
#  3. Their contents (dpkg-deb --contents): every file where Debian expects it
#     (/usr/bin, /usr/lib, /etc/rstorm, /lib/systemd/system, /usr/share/rstorm),
#     none under /usr/local, /etc/rstorm/rstorm.yaml a conffile.
#  4. Extracted: the packaged `rstorm version` runs with the packaged library;
#     `systemd-analyze verify` passes on both units (pointed at the extracted
#     binaries).
#  5. As root, with no rstorm package installed already: `dpkg -i` both on this
#     machine, the `rstorm` user exists, `systemd-analyze verify` passes on the
#     installed units, the installed CLI runs, a starter project builds with
#     find_package(rstorm) from /usr and runs with `rstorm local`; then
#     `dpkg --purge` removes the files, /etc/rstorm and the user. Skipped, with
#     the reason, otherwise (RSTORM_TEST_NO_SYSTEM_INSTALL=1 skips it too).
set -u
build=$(cd "$1" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rstorm-deb-test.XXXXXX")
installed=0
cleanup() {
  if ((installed)); then dpkg --purge rstorm-dev rstorm >/dev/null 2>&1; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok: $*"; }
unset LD_LIBRARY_PATH RSTORM_CONF_DIR

# 1. Build the packages.
cpack -G DEB -B "$tmp/packages" --config "$build/CPackConfig.cmake" >"$tmp/cpack.log" 2>&1 ||
  { cat "$tmp/cpack.log"; fail "cpack -G DEB"; }
rt=$(ls "$tmp"/packages/rstorm_*.deb 2>/dev/null | head -n 1)
dev=$(ls "$tmp"/packages/rstorm-dev_*.deb 2>/dev/null | head -n 1)
[ -n "$rt" ] && [ -n "$dev" ] || { ls -la "$tmp/packages"; fail "cpack did not write rstorm_*.deb and rstorm-dev_*.deb"; }
ok "cpack wrote $(basename "$rt") ($(du -k "$rt" | cut -f1) KB) and $(basename "$dev")"

# 2. Fields.
version=$(dpkg-deb --field "$rt" Version)
[ "$(dpkg-deb --field "$rt" Package)" = rstorm ] || fail "the runtime package is named $(dpkg-deb --field "$rt" Package)"
depends=$(dpkg-deb --field "$rt" Depends)
for lib in libthrift- libzookeeper-mt librocksdb libyaml-cpp libprometheus-cpp-pull libspdlog libssl3 libstdc++6 passwd; do
  grep -q "$lib" <<<"$depends" || fail "rstorm's Depends lacks $lib: $depends"
done
grep -q "rstorm (= $version)" <<<"$(dpkg-deb --field "$dev" Depends)" ||
  fail "rstorm-dev does not depend on rstorm (= $version): $(dpkg-deb --field "$dev" Depends)"
ok "fields: rstorm $version depends on $(tr ',' '\n' <<<"$depends" | wc -l) packages from dpkg-shlibdeps and the scripts; rstorm-dev on rstorm (= $version)"

# 3. Contents.
dpkg-deb --contents "$rt" | awk '{ print $6 }' >"$tmp/rt.list"
dpkg-deb --contents "$dev" | awk '{ print $6 }' >"$tmp/dev.list"
for f in ./usr/bin/rstorm ./usr/bin/rstorm-nimbus ./usr/bin/rstorm-supervisor ./usr/bin/rstorm-worker \
         ./usr/bin/rstorm-ui ./lib/systemd/system/rstorm-ui.service \
         ./etc/rstorm/rstorm.yaml ./lib/systemd/system/rstorm-nimbus.service \
         ./lib/systemd/system/rstorm-supervisor.service ./usr/share/rstorm/defaults.yaml \
         ./usr/share/rstorm/grafana/rstorm-dashboard.json ./usr/share/rstorm/prometheus/prometheus.yml; do
  grep -qxF "$f" "$tmp/rt.list" || fail "rstorm has no $f"
done
grep -q '^\./usr/lib/librstorm-api\.so\.[0-9]*$' "$tmp/rt.list" || fail "rstorm has no ./usr/lib/librstorm-api.so.<N>"
for f in ./usr/include/rstorm/rstorm.hpp ./usr/include/rstorm/testing.hpp ./usr/lib/cmake/rstorm/rstormConfig.cmake ./usr/lib/librstorm-api.so ./usr/lib/librstorm-testing.so; do
  grep -qxF "$f" "$tmp/dev.list" || fail "rstorm-dev has no $f"
done
if grep -q '^\./usr/local/' "$tmp/rt.list" "$tmp/dev.list"; then fail "files under /usr/local: $(grep '^\./usr/local/' "$tmp/rt.list" "$tmp/dev.list" | head -n 3)"; fi
dpkg-deb --ctrl-tarfile "$rt" | tar -xO ./conffiles 2>/dev/null | grep -qx /etc/rstorm/rstorm.yaml ||
  fail "/etc/rstorm/rstorm.yaml is not a conffile"
ok "contents: $(wc -l <"$tmp/rt.list") entries in rstorm, $(wc -l <"$tmp/dev.list") in rstorm-dev, none under /usr/local; /etc/rstorm/rstorm.yaml is a conffile"

# 4. Extracted: the binaries run, the units verify.
mkdir -p "$tmp/x"
dpkg-deb -x "$rt" "$tmp/x"
v=$(cd / && "$tmp/x/usr/bin/rstorm" version 2>&1) || fail "the packaged rstorm version: $v"
ldd "$tmp/x/usr/bin/rstorm" | grep -Eq "=> $tmp/x/usr/(bin/\.\./)?lib/librstorm-api.so" || fail "the packaged rstorm does not load the packaged librstorm-api: $(ldd "$tmp/x/usr/bin/rstorm" | grep rstorm)"
if command -v systemd-analyze >/dev/null; then
  for unit in rstorm-nimbus rstorm-supervisor; do
    sed "s#/usr/bin/#$tmp/x/usr/bin/#" "$tmp/x/lib/systemd/system/$unit.service" >"$tmp/$unit.service"
    out=$(systemd-analyze verify "$tmp/$unit.service" 2>&1) || fail "systemd-analyze verify $unit.service: $out"
    [ -z "$out" ] || fail "systemd-analyze verify $unit.service says: $out"
  done
  ok "extracted: $v; systemd-analyze verify passes on both units"
else
  ok "extracted: $v (no systemd-analyze here: units not verified)"
fi

# 5. Installed on this machine (root only), then purged.
if [ "$(id -u)" -ne 0 ]; then
  echo "skip: not root, so the packages are not installed on this machine (steps 1-4 ran)"
elif [ -n "${RSTORM_TEST_NO_SYSTEM_INSTALL:-}" ]; then
  echo "skip: RSTORM_TEST_NO_SYSTEM_INSTALL is set"
elif dpkg-query -W -f='${Status}' rstorm 2>/dev/null | grep -q "ok installed"; then
  echo "skip: an rstorm package is installed on this machine already; not touching it"
else
  dpkg -i "$rt" "$dev" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg -i"; }
  installed=1
  getent passwd rstorm >/dev/null || fail "postinst made no rstorm user"
  out=$(systemd-analyze verify /lib/systemd/system/rstorm-nimbus.service /lib/systemd/system/rstorm-supervisor.service 2>&1) ||
    fail "systemd-analyze verify of the installed units: $out"
  v=$(cd / && /usr/bin/rstorm version) || fail "/usr/bin/rstorm version"
  (cd "$tmp" && /usr/bin/rstorm new-topology sums >/dev/null) || fail "/usr/bin/rstorm new-topology"
  cmake -S "$tmp/sums" -B "$tmp/sums/build" >"$tmp/sums.log" 2>&1 && cmake --build "$tmp/sums/build" -j 2 >>"$tmp/sums.log" 2>&1 ||
    { cat "$tmp/sums.log"; fail "the starter project against the installed rstorm-dev"; }
  out=$(cd / && /usr/bin/rstorm local "$tmp/sums/build/libsums.so" -c sums.numbers=1000 2>&1)
  grep -q "sums: odd sum 250000$" <<<"$out" || { echo "$out"; fail "/usr/bin/rstorm local of the starter: no 'odd sum 250000'"; }
  ok "installed with dpkg -i: user rstorm, units verified, $v, a starter project built against /usr and run"
  dpkg --purge rstorm-dev rstorm >"$tmp/purge.log" 2>&1 || { cat "$tmp/purge.log"; fail "dpkg --purge"; }
  installed=0
  [ ! -e /usr/bin/rstorm ] && [ ! -e /etc/rstorm ] && ! getent passwd rstorm >/dev/null ||
    fail "after dpkg --purge: $(ls -d /usr/bin/rstorm /etc/rstorm 2>/dev/null) $(getent passwd rstorm)"
  ok "dpkg --purge removed the files, /etc/rstorm and the rstorm user"
fi
echo "PASS"
