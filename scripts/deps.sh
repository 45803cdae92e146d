#!/usr/bin/env bash
# Installs the Debian packages troupe needs, only those missing.
# Usage: scripts/deps.sh [extra-package...]
#        scripts/deps.sh --list     prints the packages a build depends on
# The list is every package the build or the test suite can find at configure
# time (libcaf-dev: the Savina suite's CAF twins; liburing-dev: the io
# module's io_uring engine; valgrind: the release configuration's
# send-path instruction-count test). Both README commands
# install all of it before configuring, so no check is configured out on a
# fresh machine; scripts/build.sh reconfigures a build tree when this list's
# installed versions change after it was configured.
set -euo pipefail
build_pkgs=(g++ meson ninja-build pkg-config libboost-context-dev libhwloc-dev doctest-dev
            libopenmpi-dev openmpi-bin libcereal-dev libcaf-dev liburing-dev gdb valgrind)
if [ "${1:-}" = --list ]; then
  printf '%s\n' "${build_pkgs[@]}"
  exit 0
fi
pkgs=("${build_pkgs[@]}" "$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "troupe: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
