#!/usr/bin/env bash
# Installs the Debian packages troupe needs, only those missing.
# Usage: scripts/deps.sh [extra-package...]
set -euo pipefail
pkgs=(g++ meson ninja-build pkg-config libboost-context-dev libhwloc-dev doctest-dev
      libopenmpi-dev openmpi-bin libcereal-dev liburing-dev gdb "$@")
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
