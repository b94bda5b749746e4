#!/usr/bin/env bash
# Sets up a Debian 12 machine for rstorm, builds it, and then:
#   ./bootstrap.sh demo    runs the word-count topology in local mode
#   ./bootstrap.sh test    runs the whole test suite, then short fuzz and chaos runs
#   ./bootstrap.sh build   only installs what is missing and builds
# Installing is idempotent: packages already present are not touched.
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git
  libboost-dev libboost-system-dev libboost-program-options-dev libboost-filesystem-dev
  libthrift-dev thrift-compiler libevent-dev libzookeeper-mt-dev zookeeper
  libyaml-cpp-dev librocksdb-dev prometheus-cpp-dev libgtest-dev libgmock-dev
  libspdlog-dev libcli11-dev nlohmann-json3-dev libxxhash-dev libssl-dev
  prometheus default-jre-headless iproute2 procps curl clang file systemd
  python3 chromium chromium-driver
)
BUILD_DIR=${RSTORM_BUILD_DIR:-build}
# ccache hits for a clone in another folder too: paths under the clone are
# hashed relative to it, and the build folder is not hashed (so debug info
# may name the folder that compiled a cached object first).
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
JOBS=${RSTORM_JOBS:-2}

install_missing() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    if [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" != "installed" ]; then
      missing+=("$p")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "bootstrap: all ${#PACKAGES[@]} packages present"
    return
  fi
  echo "bootstrap: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

build() {
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  fi
  cmake --build "$BUILD_DIR" -j"$JOBS"
}

check_tests_registered() {
  # Every *_test.cpp under tests/ must be named in a CMakeLists.txt.
  local unregistered=0
  while IFS= read -r f; do
    local dir base
    dir=$(dirname "$f")
    base=$(basename "$f")
    if ! grep -qs "$base" "$dir/CMakeLists.txt"; then
      echo "bootstrap: $f is not registered in $dir/CMakeLists.txt"
      unregistered=1
    fi
  done < <(find tests -name '*_test.cpp')
  return $unregistered
}

cmd=${1:-demo}
case "$cmd" in
  build)
    install_missing
    build
    ;;
  demo)
    install_missing
    build
    "$BUILD_DIR/bin/rstorm" local "$BUILD_DIR/lib/libword_count.so" --duration "${RSTORM_DEMO_SECONDS:-15}"
    ;;
  test)
    install_missing
    check_tests_registered
    build
    ctest --test-dir "$BUILD_DIR" -j"$JOBS" --output-on-failure --timeout 600
    # Every decoder of outside bytes under libFuzzer with ASan+UBSan, briefly
    # (fuzz/README.md: `fuzz/run.sh 1000000` is the long run).
    RSTORM_FUZZ_JOBS="$JOBS" fuzz/run.sh "${RSTORM_FUZZ_RUNS:-5000}"
    # A worker killed with -9 on a dev cluster: recovered, every sentence
    # acked, no process left (bench/chaos/README.md has the full bench).
    bench/chaos/run.sh --build "$BUILD_DIR" --short
    ;;
  *)
    echo "usage: $0 [demo|test|build]" >&2
    exit 2
    ;;
esac
