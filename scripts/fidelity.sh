#!/usr/bin/env bash
# `make fidelity` (root): records a matrix of workloads, each once on an idle machine and
# once under a parallel compile on every CPU, and prints per run what `cstool report
# --check` found against the kernel's own counters: threads checked, whether every
# switch count was exact, and the worst thread's on-CPU and wait-for-CPU difference
# (ms and % of the kernel's value), and the steal time the host took from the VM's CPUs
# meanwhile (ms, all CPUs; "-" when not known); under the table, where the check left
# out waits the kernel does not count (after preemptions on the way to sleep). Exits
# non-zero if any run did not PASS.
#
#   scripts/fidelity.sh [BUILD_DIR]        FIDELITY_LOADS="idle build" (default both)
#   FIDELITY_KEEP=1 keeps the recordings (their directory is printed) to look into a FAIL.
set -uo pipefail
build=${1:-build}
cstool=$(realpath "$build/cstool")
w=$(realpath "$build/workloads/cstool_workload")
out=$(mktemp -d /tmp/cstool-fidelity.XXXXXX)
loads=${FIDELITY_LOADS:-idle build}
load_pids=()

workload_pids=()  # the system-wide row's background workloads
cleanup() {
  stop_load
  for p in "${workload_pids[@]}"; do kill "$p" 2>/dev/null; done
  if [ -n "${FIDELITY_KEEP:-}" ]; then echo "recordings kept in $out"; else rm -rf "$out"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A parallel build: one compiler loop per CPU, recompiling a real source file.
start_load() {
  local src
  src=$(dirname "$0")/../tests/workloads/cstool_workload.cc
  for _ in $(seq "$(nproc)"); do
    (while :; do c++ -O2 -std=c++20 -c "$src" -o /dev/null 2>/dev/null; done) &
    load_pids+=($!)
  done
  sleep 2
}
stop_load() {
  for p in "${load_pids[@]}"; do
    pkill -P "$p" 2>/dev/null
    kill "$p" 2>/dev/null
  done
  wait "${load_pids[@]}" 2>/dev/null
  load_pids=()
}

# name | how it is recorded (after `cstool record -o FILE`; ATTACH: `-p` on the command
# started in the background; SYSTEM: `-a` while two workloads run)
workloads=(
  "nanosleep-50us|-- $w nanosleep 3000 50"
  "nanosleep-1ms|-- $w nanosleep 300 1000"
  "pingpong-1cpu|-- $w pingpong 20000 0"
  "pingpong-free|-- $w pingpong 20000 -1"
  "futex-4thr|-- $w mutex 4 500"
  "yield-2thr|-- $w yield 2000 0"
  "hogs-1cpu|-- $w cpubound 200 0"
  "migrating|-- $w cpubound 300 -1"
  "fork-exec|-- sh -c 'for i in \$(seq 100); do /bin/true; done'"
  "pipeline|-- sh -c 'seq 1 300000 | cat | cat | wc -l >/dev/null'"
  "stop-cont|-- sh -c '$w cpubound 400 0 & p=\$!; sleep 0.1; kill -STOP \$p; sleep 0.1; kill -CONT \$p; wait'"
  "hackbench|-b 32768 -- hackbench -g 4 -l 200"
  "attach|ATTACH $w phases 1500"
  "system-wide|SYSTEM"
)

summarize() {  # FILE NAME LOAD
  "$cstool" report "$1" --check --format json 2>/dev/null |
    python3 -c "$summary_py" "$2" "$3" "$out/preempted_asleep"
}
summary_py=$(cat <<'PY'
import json, sys
name, load, preempted_log = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    report = json.load(sys.stdin)
    c = report["check"]
except Exception as e:
    print("%-16s %-6s report failed: %s" % (name, load, e))
    sys.exit(1)
def worst(k):
    w = c["worst_thread"][k]
    if w is None:
        return "-"
    # No percentage of a kernel value of 0 (diff_pct null).
    pct = "   of 0" if w["diff_pct"] is None else "%+6.2f%%" % w["diff_pct"]
    return "%+8.3f %s" % (w["diff_ns"] / 1e6, pct)
# Of the compared threads: an `untraced` one (the kernel recorded none of its switch-outs)
# is shown, not judged.
exact = all(t["ok"]["switches"] for t in c["threads"] if t["status"] in ("agree", "DISAGREE"))
considered = (c["compared"] + c["lost_events"] + c["untraced"] + c["partial"] +
              c["without_counters"])
verdict = c["verdict"].split(":")[1].strip()
steal = report["trace"].get("host_steal")
# (To the us where the runqueue clocks gave it, in whole ms from /proc/stat's steps.)
steal = "-" if steal is None else ("%.3f" if steal["step_ns"] == 1 else "%.0f") % (
    steal["total_ns"] / 1e6)
print("%-16s %-6s %4d/%-4d %-6s %17s %17s %6s  %s" % (name, load, c["compared"], considered,
      "yes" if exact else "NO", worst("on_cpu"), worst("wait_cpu"), steal, verdict))
# The waits after preemptions on the way to sleep the kernel did not count (left out of
# WAIT), for the line under the table.
preempted = [t.get("preempted_asleep_ns", 0) for t in c["threads"]]
if any(preempted):
    with open(preempted_log, "a") as f:
        f.write("%s %s %d %d\n" % (name, load, sum(1 for p in preempted if p), sum(preempted)))
sys.exit(0 if c["passed"] else 1)
PY
)

printf '%-16s %-6s %-9s %-6s %17s %17s %6s  %s\n' WORKLOAD LOAD CHECKED EXACT "ON-CPU ms %" \
  "WAIT ms %" STEAL VERDICT
status=0
for load in $loads; do
  [ "$load" = build ] && start_load
  for entry in "${workloads[@]}"; do
    name=${entry%%|*}
    how=${entry#*|}
    file="$out/$name-$load.dat"
    if [[ $how == ATTACH* ]]; then
      eval "${how#ATTACH } &"
      target=$!
      sleep 0.3
      "$cstool" record -o "$file" -p "$target" -N 0.8 >/dev/null 2>&1
      wait "$target"
    elif [[ $how == SYSTEM ]]; then
      # -a: every thread of the machine, with a cross-CPU ping-pong and a mutex running
      # through the recording (sampled at both ends) and the load's compilers coming and going.
      "$w" pingrate 3 -1 3000 >/dev/null &
      workload_pids=($!)
      "$w" mutex 4 100000 >/dev/null &
      workload_pids+=($!)
      sleep 0.3
      "$cstool" record -o "$file" -a -N 1.5 >/dev/null 2>&1
      kill "${workload_pids[@]}" 2>/dev/null
      wait "${workload_pids[@]}" 2>/dev/null
      workload_pids=()
    else
      eval "\"$cstool\" record -o \"$file\" $how" >/dev/null 2>&1
    fi
    summarize "$file" "$name" "$load" || status=1
  done
  [ "$load" = build ] && stop_load
done
if [ -s "$out/preempted_asleep" ]; then
  awk '{ printf "%s%s %s: %d thread(s), %.3f ms", (NR > 1 ? "; " : ""), $1, $2, $3, $4 / 1e6 }
       END { print "" }' "$out/preempted_asleep" |
    sed 's/^/waits after preemptions on the way to sleep, left out of WAIT (the kernel does not count them): /'
else
  echo "waits after preemptions on the way to sleep, left out of WAIT: none"
fi
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r), cstool $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null)"
exit $status
