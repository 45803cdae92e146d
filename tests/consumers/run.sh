#!/usr/bin/env bash
# Proves each way a C++ user consumes troupe, on a clean copy and a clean
# install in a temporary directory:
#   1. Meson subproject: a wrap file whose [provide] section resolves
#      dependency('troupe-channels'); troupe's tests/examples/benchmarks
#      stay off; only the modules the consumer needs are built.
#   2. pkg-config after `meson install` into a prefix (multiarch libdir),
#      the consumer built by one compiler command with an rpath.
#   3. CMake: find_package(troupe REQUIRED COMPONENTS channels actors) and
#      the imported targets troupe::channels, troupe::actors.
# Each route also builds a troupe-remote program (src/remote.cpp:
# dependency('troupe-remote'), pkg-config troupe-remote, CMake
# COMPONENTS remote / troupe::remote) and runs it under mpirun -np 2, when
# MPI and cereal are installed (else it says the remote routes are skipped).
# The installed build (routes 2 and 3) is configured -Dtopology=disabled:
# a user of channels and actors then needs no hwloc, and neither the .pc
# files nor the CMake package may name it (route 1 keeps the default).
# Also checks: .pc files hold no absolute path but their prefix, the
# shared libraries carry a soname, a missing CMake component is named, a
# program compiled against another build's troupe/config.hpp fails to
# link, and a C++17 compile stops at troupe's "#error" instead of a flood
# of errors.
# Usage: tests/consumers/run.sh   (exit status 0 iff every route works)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/consumers
tmp=$(mktemp -d "${TMPDIR:-/tmp}/troupe-consumers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cxx=${CXX:-c++}
step() { echo "-- consumers: $*"; }
fail() { echo "FAIL consumers: $*" >&2; exit 1; }

command -v cmake >/dev/null || bash "$root/scripts/deps.sh" cmake

# troupe's source tree as a user gets it: tracked and new files, no build
# trees (without git: everything but build/ and .git).
copy_troupe() {
  mkdir -p "$1"
  if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$root" && git ls-files -z --cached --others --exclude-standard |
       while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
       tar --null -T - -cf -) | tar -xf - -C "$1"
  else
    (cd "$root" && tar --exclude=./build --exclude=./.git -cf - .) | tar -xf - -C "$1"
  fi
}
cp -r "$here/src" "$here/meson" "$here/cmake" "$here/meson-remote" "$here/cmake-remote" "$tmp/"
# The remote routes need MPI (mpicxx, mpirun) and cereal.
have_remote=false
if command -v mpicxx >/dev/null && command -v mpirun >/dev/null &&
   echo '#include <cereal/cereal.hpp>' | "$cxx" -x c++ -fsyntax-only - 2>/dev/null; then
  have_remote=true
else
  echo "-- consumers: remote routes skipped: MPI or cereal not installed (scripts/deps.sh installs them)"
fi
mpirun2() { mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 "$@"; }

step "1/3 Meson subproject (wrap + [provide], dependency('troupe-channels'))"
copy_troupe "$tmp/meson/subprojects/troupe"
meson setup "$tmp/meson/build" "$tmp/meson" -Dtroupe:modules=channels >"$tmp/sub.log" 2>&1 ||
  { cat "$tmp/sub.log"; fail "meson setup of the subproject consumer"; }
ninja -C "$tmp/meson/build" >>"$tmp/sub.log" 2>&1 || { cat "$tmp/sub.log"; fail "subproject build"; }
"$tmp/meson/build/consumer"
# `meson test --list` prints test names, or "No tests defined." and exits 1.
tests=$(meson test -C "$tmp/meson/build" --list 2>/dev/null || true)
! grep -q / <<<"$tests" || fail "troupe's tests are built when troupe is a subproject"
[ ! -e "$tmp/meson/build/subprojects/troupe/examples" ] ||
  fail "troupe's examples are built when troupe is a subproject"
[ ! -e "$tmp/meson/build/subprojects/troupe/actors" ] ||
  fail "the subproject built a module the consumer did not ask for"

if $have_remote; then
  step "1/3 Meson subproject, remote (dependency('troupe-remote'))"
  copy_troupe "$tmp/meson-remote/subprojects/troupe"
  meson setup "$tmp/meson-remote/build" "$tmp/meson-remote" -Dtroupe:modules=actors \
    -Dtroupe:remote=enabled >"$tmp/sub-remote.log" 2>&1 ||
    { cat "$tmp/sub-remote.log"; fail "meson setup of the remote subproject consumer"; }
  ninja -C "$tmp/meson-remote/build" >>"$tmp/sub-remote.log" 2>&1 ||
    { cat "$tmp/sub-remote.log"; fail "remote subproject build"; }
  mpirun2 "$tmp/meson-remote/build/consumer" || fail "the remote subproject consumer"
fi

step "2/3 pkg-config after meson install into a prefix"
prefix=$tmp/prefix
meson setup "$tmp/troupe-build" "$root" --prefix="$prefix" -Dmodules=channels,actors,io \
  -Dtopology=disabled -Dtests=false -Dexamples=false -Dbenchmarks=false >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "meson setup of troupe"; }
ninja -C "$tmp/troupe-build" install >>"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "troupe build + install"; }
pcdir=$(dirname "$(find "$prefix" -name troupe-core.pc)")
for pc in "$pcdir"/troupe*.pc; do
  if grep -v '^prefix=' "$pc" | grep -Eq '(^|[[:space:]=])/'; then
    grep -n '/' "$pc"; fail "$(basename "$pc") holds an absolute path"
  fi
done
! grep -qi hwloc "$pcdir"/troupe*.pc || fail "a .pc file of a build without hwloc names hwloc"
! grep -v '^[[:space:]]*#' "$(find "$prefix" -name troupeConfig.cmake)" | grep -qi hwloc ||
  fail "the CMake package of a build without hwloc names hwloc"
! grep -q 'TROUPE_HAS_HWLOC 1' "$prefix/include/troupe/config.hpp" ||
  fail "config.hpp of a build without hwloc claims hwloc"
libdir=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir troupe-core)
readelf -d "$libdir/libtroupe_core.so" | grep -q 'SONAME.*libtroupe_core\.so\.[0-9]' ||
  fail "libtroupe_core.so has no versioned soname"
! readelf -d "$libdir/libtroupe_core.so" | grep -q 'NEEDED.*hwloc' ||
  fail "libtroupe_core.so of a build without hwloc needs libhwloc"
# The command the README gives, verbatim but for the paths.
# shellcheck disable=SC2046
PKG_CONFIG_PATH=$pcdir "$cxx" -std=c++20 "$tmp/src/channels_actors.cpp" -o "$tmp/pc-consumer" \
  $(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs troupe-channels troupe-actors) \
  -Wl,-rpath,"$libdir" || fail "pkg-config consumer build"
"$tmp/pc-consumer"

if $have_remote; then
  [ -f "$pcdir/troupe-remote.pc" ] || fail "troupe-remote.pc not installed (MPI and cereal are here)"
  # shellcheck disable=SC2046
  PKG_CONFIG_PATH=$pcdir "$cxx" -std=c++20 "$tmp/src/remote.cpp" -o "$tmp/pc-remote" \
    $(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs troupe-remote) \
    -Wl,-rpath,"$libdir" || fail "pkg-config remote consumer build"
  mpirun2 "$tmp/pc-remote" || fail "the pkg-config remote consumer"
fi

PKG_CONFIG_PATH=$pcdir "$cxx" -std=c++20 "$tmp/src/io_pair.cpp" -o "$tmp/pc-io-consumer" \
  $(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs troupe-io) -Wl,-rpath,"$libdir" ||
  fail "pkg-config build of the io consumer"
"$tmp/pc-io-consumer" || fail "the pkg-config io consumer"

step "3/3 CMake find_package(troupe REQUIRED COMPONENTS channels actors io)"
cmake -S "$tmp/cmake" -B "$tmp/cmake/build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; fail "cmake configure"; }
cmake --build "$tmp/cmake/build" >>"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; fail "cmake build"; }
"$tmp/cmake/build/consumer"
"$tmp/cmake/build/io_consumer"
if $have_remote; then
  cmake -S "$tmp/cmake-remote" -B "$tmp/cmake-remote/build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release >"$tmp/cmake-remote.log" 2>&1 ||
    { cat "$tmp/cmake-remote.log"; fail "cmake configure (COMPONENTS remote)"; }
  cmake --build "$tmp/cmake-remote/build" >>"$tmp/cmake-remote.log" 2>&1 ||
    { cat "$tmp/cmake-remote.log"; fail "cmake build (troupe::remote)"; }
  mpirun2 "$tmp/cmake-remote/build/consumer" || fail "the CMake remote consumer"
fi
# A component this install lacks must fail find_package with a message.
mkdir -p "$tmp/cmake-missing"
printf '%s\n' 'cmake_minimum_required(VERSION 3.16)' 'project(p CXX)' \
  'find_package(troupe REQUIRED COMPONENTS waituntil)' >"$tmp/cmake-missing/CMakeLists.txt"
if cmake -S "$tmp/cmake-missing" -B "$tmp/cmake-missing/build" -DCMAKE_PREFIX_PATH="$prefix" \
     >"$tmp/missing.log" 2>&1; then
  fail "find_package accepted a module this install does not have"
fi
tr -s ' \n' ' ' <"$tmp/missing.log" | grep -q "without module 'waituntil'" || { cat "$tmp/missing.log"; fail "no clear message for a missing component"; }

step "a program compiled against another build's config.hpp fails to link"
# A copy of the installed headers whose config.hpp claims a checked build.
mkdir -p "$tmp/other/troupe"
sed 's/_checked0_/_checked1_/' "$prefix/include/troupe/config.hpp" >"$tmp/other/troupe/config.hpp"
if PKG_CONFIG_PATH=$pcdir "$cxx" -std=c++20 -I"$tmp/other" "$tmp/src/channels_actors.cpp" -o "$tmp/mixed" \
     $(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs troupe-channels troupe-actors) >"$tmp/mixed.log" 2>&1; then
  fail "a program whose config.hpp differs from the library's linked"
fi
grep -q 'troupe_build_config_checked1_' "$tmp/mixed.log" || { cat "$tmp/mixed.log"; fail "the link error does not name the build choices"; }

step "C++17 compile stops at troupe's #error"
echo '#include <troupe/channels.hpp>' >"$tmp/old.cpp"
if "$cxx" -std=c++17 -fsyntax-only -I"$prefix/include" "$tmp/old.cpp" >"$tmp/old.log" 2>&1; then
  fail "troupe compiled as C++17"
fi
grep -q 'troupe needs C++20' "$tmp/old.log" || { cat "$tmp/old.log"; fail "no #error naming C++20"; }
[ "$(grep -cE ': (fatal )?error:' "$tmp/old.log")" -le 2 ] || { cat "$tmp/old.log"; fail "C++17 gives more than the #error"; }

echo "consumers: all three routes OK"
