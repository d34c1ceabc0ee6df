#!/usr/bin/env bash
# The classic interrupt experiment: a CPU-bound job with a fixed amount of work,
# pinned to one CPU, run RUNS times without and with `cstool nmi-inject` on that CPU at
# a few rates. `cstool report` of each run gives the job's irq microstate, its
# involuntary switches with their causes, and its run time; the table shows them
# rising with the injected rate.
#
# usage: scripts/irq_demo.sh [BUILD_DIR]   (root; env: CPU=1 RUNS=3 MLOOPS=400
#                                           RATES="0 1000 5000 20000" SOURCES="timer ipi")
set -euo pipefail
build=${1:-build}
cpu=${CPU:-1}
runs=${RUNS:-3}
mloops=${MLOOPS:-400}
rates=${RATES:-"0 1000 5000 20000"}
sources=${SOURCES:-"timer ipi"}
cstool="$build/cstool"
workload="$build/workloads/cstool_workload"
tmp=$(mktemp -d /tmp/cstool-irq-demo.XXXXXX)
inject_pid=""
cleanup() {
  if [[ -n "$inject_pid" ]]; then kill -INT "$inject_pid" 2>/dev/null || true; wait "$inject_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# One run: record the job, return "life_ms oncpu_ms irq_ms involuntary causes".
run_job() {
  "$cstool" record -o "$tmp/run.dat" -- "$workload" spin "$mloops" "$cpu" >/dev/null 2>&1
  "$cstool" report "$tmp/run.dat" --format json | jq -r '
    [.threads[] | select(.comm == "cstool_workload")] | max_by(.lifetime_ns) |
    [ (.lifetime_ns / 1e6),
      ((.microstates_ns.user + .microstates_ns.sys + .microstates_ns.irq
        + .microstates_ns.softirq) / 1e6),
      (.microstates_ns.irq / 1e6),
      .switches.involuntary,
      ([.switches.causes | to_entries[] | select(.key | startswith("preempt") or . == "yield")
        | "\(.key)=\(.value)"] | join(","))
    ] | @tsv'
}

printf "%-6s %7s %4s %10s %10s %9s %6s %6s  %s\n" SOURCE RATE RUNS LIFE_MS ONCPU_MS IRQ_MS IRQ% INVOL "INVOLUNTARY CAUSES (last run) / ACHIEVED RATE"
for source in $sources; do
  for rate in $rates; do
    [[ "$rate" == 0 && "$source" != "${sources%% *}" ]] && continue  # one baseline
    achieved="-"
    if [[ "$rate" != 0 ]]; then
      "$cstool" nmi-inject --cpu "$cpu" --source "$source" --rate "$rate" --duration 0 \
        >"$tmp/inject.out" 2>"$tmp/inject.err" &
      inject_pid=$!
      for _ in $(seq 200); do grep -q TIME_S "$tmp/inject.out" 2>/dev/null && break; sleep 0.05; done
    fi
    sum_life=0 sum_cpu=0 sum_irq=0 sum_inv=0 causes=""
    for _ in $(seq "$runs"); do
      read -r life oncpu irq inv causes < <(run_job)
      sum_life=$(echo "$sum_life + $life" | bc -l); sum_cpu=$(echo "$sum_cpu + $oncpu" | bc -l)
      sum_irq=$(echo "$sum_irq + $irq" | bc -l); sum_inv=$((sum_inv + inv))
    done
    if [[ -n "$inject_pid" ]]; then
      kill -INT "$inject_pid"; wait "$inject_pid" || true; inject_pid=""
      achieved=$(sed -n 's/^total: .*achieved \([0-9]*\/s\).*/\1/p' "$tmp/inject.out")
    fi
    printf "%-6s %7s %4s %10.1f %10.1f %9.2f %6.2f %6.1f  %s / %s\n" \
      "$([[ $rate == 0 ]] && echo none || echo "$source")" "$rate" "$runs" \
      "$(echo "$sum_life / $runs" | bc -l)" "$(echo "$sum_cpu / $runs" | bc -l)" \
      "$(echo "$sum_irq / $runs" | bc -l)" "$(echo "100 * $sum_irq / $sum_cpu" | bc -l)" \
      "$(echo "$sum_inv / $runs" | bc -l)" "${causes:--}" "$achieved"
  done
done
