#!/usr/bin/env bash
# Installs what ridge's build, tests and benchmarks need on Debian 12. Idempotent; run as root
# (or it uses sudo). Packages:
#   build-essential cmake pkg-config   the toolchain
#   clang libclang-rt-14-dev           sanitizer and fuzzing builds
#   zlib1g-dev                         gzip'd IDX datasets
#   dataset-fashion-mnist              the default training data (/usr/share/datasets/fashion-mnist)
#   libopenblas-dev libblis-dev libdnnl-dev libsleef-dev   benchmark peers (never linked into libridge)
#   librsvg2-bin                       rsvg-convert, to check roofline SVGs
#   python3                            the CLI end-to-end tests' small helpers
#   libopenmpi-dev openmpi-bin         data-parallel training (RIDGE_WITH_MPI=ON) and its tests
# With --full, also python3-torch (PyTorch, the oracle of the `full` GPT-2 and CNN tests and
# the side-by-side comparison scripts; about 1 GB).
set -euo pipefail
packages=(build-essential cmake pkg-config clang libclang-rt-14-dev zlib1g-dev
          dataset-fashion-mnist libopenblas-dev libblis-dev libdnnl-dev libsleef-dev
          librsvg2-bin python3 libopenmpi-dev openmpi-bin)
[ "${1:-}" = "--full" ] && packages+=(python3-torch)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi
