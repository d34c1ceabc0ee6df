#!/usr/bin/env bash
# Soak test (not part of CI): records a busy workload for SECONDS with `cstool record`
# (default options: zstd chunks), and every 10 s prints cstool's RSS and the bytes it
# has written so far (the per-CPU chunk files); then the recording's summary, the final
# file, and `cstool report --check` on it under /usr/bin/time (report's peak RSS).
# What to look for: RSS flat after the first minute, bytes growing linearly, 0 lost.
# usage: scripts/longrun.sh BUILD_DIR [SECONDS] [WORKDIR] [-- WORKLOAD ARGS...]
# Default workload: a pipe ping-pong paced to 50000 round trips/s (about 600 k events/s,
# a rate `make bench` shows loss-free on the project's 2-vCPU VM).
set -euo pipefail
build=${1:?build dir}; shift
seconds=${1:-600}; shift || true
work=${1:-/tmp/cstool-longrun}; shift || true
[ "${1:-}" = "--" ] && shift
if [ $# -eq 0 ]; then set -- "$build/workloads/cstool_workload" pingrate "$seconds" -1 50000; fi
record_secs=$((seconds + 10))  # the workload ends first, by itself
mkdir -p "$work"
out="$work/long.dat"
rm -f "$out"
"$build/cstool" record -N "$record_secs" -o "$out" -- "$@" >"$work/workload.out" 2>"$work/record.err" &
pid=$!
# Whatever ends this script ends the recording too (it writes its file on SIGINT).
trap 'kill -INT "$pid" 2>/dev/null || true' EXIT
echo "# cstool record (pid $pid) for ${seconds}s: $*"
printf '%6s %10s %14s\n' t_s rss_kb bytes_written
t=0
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
  bytes=$( (cat "$out".cpu*.tmp 2>/dev/null || true) | wc -c)
  [ -n "$rss" ] && printf '%6d %10d %14d\n' "$t" "$rss" "$bytes"
  sleep 10
  t=$((t + 10))
done
wait "$pid" || echo "# record exit status $?"
tr '\r' '\n' <"$work/record.err" | grep -v 'events/s, ' || true
echo "# file: $(stat -c %s "$out") bytes"
/usr/bin/time -v "$build/cstool" report "$out" --check >"$work/report.txt" 2>"$work/report.time" || true
grep -E 'Maximum resident|Elapsed' "$work/report.time" | sed 's/^\s*/# report: /'
grep -E '^(kernel|KERNEL|check|CHECK)|agree' "$work/report.txt" | head -5 | sed 's/^/# /'
