#!/usr/bin/env bash
# `make release`: cstool built with profile-guided optimisation (GCC). Builds programs
# that count their branches, runs them on traces, and builds again with those counts:
# the state machine's and the decoder's branches then follow what traces do. Measured on
# the project's VM: `report` of a 4.3 M-event ping-pong 11-15 % faster (README,
# Performance). The training traces: the repository's fixtures, and, where tracefs can
# be written (root), ping-pong recordings made here by the instrumented cstool itself,
# raw pages and zstd chunks, and a synthetic file of 64 CPUs (v6 and, with trace-cmd, v7).
#   scripts/pgo-build.sh [BUILD_DIR]      (default build-release; the binary: BUILD_DIR/cstool)
set -euo pipefail

BUILD_DIR=${1:-build-release}
SRC_DIR=$(cd "$(dirname "$0")/.." && pwd)
cd "$SRC_DIR"
mkdir -p "$BUILD_DIR"
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
PROFILE=$BUILD_DIR/pgo-profile
JOBS=${JOBS:-$(nproc)}
LAUNCHER=()
if command -v ccache >/dev/null; then
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi

# Link-time optimisation on top of the profile: with the counts, GCC inlines across the
# libraries' boundaries where the traces go (measured on the AMD VM, 2026-12-06, the same
# sources alternated: a 143-event report 11.3 -> 10.5 ms, the 4.3 M-event ping-pong
# `-j 1` 191 -> 188 ms fastest, its v7+zstd copy `-j 2` 167 -> 164 ms; output identical).
configure() {  # $1: generate or use
  cmake -S . -B "$BUILD_DIR" "${LAUNCHER[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=ON \
    -DCSTOOL_PGO="$1" -DCSTOOL_PGO_DIR="$PROFILE" -DCSTOOL_BUILD_TESTS=OFF \
    -DCSTOOL_BUILD_INTEGRATION=ON -DCSTOOL_BUILD_BENCH="${CSTOOL_PGO_BENCH:-OFF}" >/dev/null
}

echo "== pgo-build: 1/3 instrumented build ($BUILD_DIR)" >&2
rm -rf "$PROFILE"
configure generate
cmake --build "$BUILD_DIR" -j "$JOBS" --target cstool cstool_workload cstool_synthetic_trace >/dev/null

echo "== pgo-build: 2/3 training" >&2
CSTOOL=$BUILD_DIR/cstool
TRAIN=$(mktemp -d)
trap 'rm -rf "$TRAIN"' EXIT
traces=(tests/fixtures/*.dat)
# Recordings where tracefs can be written; the fixtures alone otherwise.
record() {  # $1: file, then record's options
  local out=$1
  shift
  if "$CSTOOL" record "$@" -o "$out" -- "$BUILD_DIR/workloads/cstool_workload" pingpong 100000 0 \
    >"$TRAIN/record.log" 2>&1; then
    traces+=("$out")
  else
    echo "pgo-build: $out not recorded ($(tail -n 1 "$TRAIN/record.log")); trained without it" >&2
  fi
}
if [[ $(id -u) -eq 0 ]]; then
  record "$TRAIN/pages.dat" --compress=none
  record "$TRAIN/zstd.dat"
else
  echo "pgo-build: not root: trained on the repository's fixtures only" >&2
fi
# This machine's recordings have its few CPUs; a file of many trains the merge of many
# streams and the state of many CPUs (trained without one, the profile left a 64-CPU
# report 27 % slower than a plain build). Written by a program built with the same
# instrumentation: its counts go to a profile of their own (GCOV_PREFIX), not to cstool's.
if GCOV_PREFIX="$TRAIN/generator-profile" "$BUILD_DIR/cstool_synthetic_trace" 64 400000 \
  "$TRAIN/cpus64.dat" "$TRAIN/cpus64_v7.dat" 2>"$TRAIN/synthetic.log"; then
  traces+=("$TRAIN/cpus64.dat" "$TRAIN/cpus64_v7.dat")
elif [[ -f $TRAIN/cpus64.dat ]]; then
  traces+=("$TRAIN/cpus64.dat")  # (no trace-cmd: no v7 conversion)
else
  echo "pgo-build: no 64-CPU file ($(tail -n 1 "$TRAIN/synthetic.log")); trained without it" >&2
fi
for trace in "${traces[@]}"; do
  echo "   $trace" >&2
  for jobs in 1 2; do "$CSTOOL" report "$trace" -j "$jobs" >/dev/null; done
  "$CSTOOL" report "$trace" --format json >/dev/null
  "$CSTOOL" report "$trace" --check --format csv >/dev/null 2>&1 || true  # (a verdict's status)
  "$CSTOOL" irq "$trace" >/dev/null 2>&1 || true  # (some fixtures have no interrupts)
done

# A profile the second build cannot find would quietly leave it a plain build.
if ! compgen -G "$PROFILE/*.gcda" >/dev/null; then
  echo "pgo-build: the training left no profile in $PROFILE" >&2
  exit 1
fi

echo "== pgo-build: 3/3 optimised build" >&2
configure use
cmake --build "$BUILD_DIR" -j "$JOBS" >/dev/null
echo "pgo-build: $CSTOOL" >&2
