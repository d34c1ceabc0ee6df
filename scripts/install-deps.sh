#!/usr/bin/env bash
# Installs every Debian package the README's commands need (make demo, make check with
# its sanitizer and fuzzer stages, make bench) on a machine that has only the base the
# README assumes (build-essential cmake git clang python3). protobuf: the Perfetto
# protobuf timeline. chromium: the browser test
# of `report --html` (libpng-dev: it reads the screenshot's pixels); llvm: llvm-symbolizer, so sanitizer reports carry file:line.
# Idempotent: does nothing (and needs no network) when everything is present.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config git ccache
  libtracefs-dev libtraceevent-dev libtracecmd-dev trace-cmd
  libsqlite3-dev sqlite3  # report --format sqlite; the fleet-query tests run the sqlite3 CLI
  libzstd-dev zlib1g-dev libcli11-dev libfmt-dev nlohmann-json3-dev libseccomp-dev libnl-genl-3-dev libnl-3-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  libprotobuf-dev protobuf-compiler  # report --timeline's Perfetto protobuf format
  libtracefs-doc libtraceevent-doc man-db
  chromium fonts-dejavu-core libpng-dev
  rt-tests  # hackbench: the README's process-tree example and a make fidelity workload
  jq  # scripts/irq_demo.sh reads the report's JSON
  clang libclang-rt-14-dev llvm  # the sanitizer build and libFuzzer; llvm-symbolizer
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run as root (or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
