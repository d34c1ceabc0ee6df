#!/usr/bin/env bash
# Long-run memory check (not part of CI): records a busy workload for SECONDS, samples
# cstool's RSS every 10 s, then runs `cstool report` on the result under
# /usr/bin/time -v. Prints "t_s rss_kb" lines, the recording summary and report peak RSS.
# usage: scripts/longrun.sh BUILD_DIR [SECONDS] [WORKDIR] -- WORKLOAD ARGS...
set -euo pipefail
build=${1:?build dir}; shift
seconds=${1:-600}; shift || true
work=${1:-/tmp/cstool-longrun}; shift || true
[ "${1:-}" = "--" ] && shift
if [ $# -eq 0 ]; then set -- "$build/workloads/cstool_workload" nanosleep 1000000000 50; fi
mkdir -p "$work"
out="$work/long.dat"
"$build/cstool" record -N "$seconds" -o "$out" -- "$@" 2>"$work/record.err" &
pid=$!
echo "# t_s rss_kb (cstool record, pid $pid)"
t=0
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
  [ -n "$rss" ] && echo "$t $rss"
  sleep 10
  t=$((t + 10))
done
wait "$pid" || echo "# record exit status $?"
tr '\r' '\n' <"$work/record.err" | grep -v 'events/s, ' || true
ls -l "$out"
/usr/bin/time -v "$build/cstool" report "$out" --format json >"$work/report.json" 2>"$work/report.time" || true
grep -E 'Maximum resident|Elapsed|Exit status' "$work/report.time"
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); t=j['trace']; print('report: events', t['events'], 'threads', len(j['threads']), 'lost', t['lost_events_total'])" "$work/report.json" || true
