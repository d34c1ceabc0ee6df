#!/usr/bin/env bash
# Runs every fuzzer of a CSTOOL_FUZZ build for a bounded time.
# usage: scripts/run-fuzz.sh BUILD_DIR SECONDS
set -euo pipefail
build=${1:?build dir}
seconds=${2:-60}
src=$(cd "$(dirname "$0")/.." && pwd)
# Sanitizer options (leaks are errors, tests/sanitizers/lsan.supp) are compiled in:
# tests/sanitizers/sanitizer_defaults.cc.
status=0
for fuzzer in "$build"/*_fuzzer; do
  [ -x "$fuzzer" ] || continue
  name=$(basename "$fuzzer")
  corpus="$build/corpus/$name"
  mkdir -p "$corpus" "$build/artifacts"
  echo "fuzz: $name for ${seconds}s (seeds: the trace files in tests/fixtures)"
  # New inputs go to the first (writable) corpus directory; the seeds stay untouched.
  if ! "$fuzzer" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$build/artifacts/" \
      "$corpus" "$src/tests/fixtures" >"$build/$name.log" 2>&1; then
    status=1
    tail -n 60 "$build/$name.log" >&2
    echo "fuzz: $name found a problem; inputs in $build/artifacts/ (add them to" \
      "tests/fuzz/regressions/)" >&2
  else
    grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^#[0-9]+.*DONE' "$build/$name.log" || true
  fi
done
exit $status
