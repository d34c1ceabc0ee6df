#!/usr/bin/env bash
# `make demo`: record the bundled demo workload and print its report.
set -euo pipefail
build=${1:-build}
out="$build/demo.dat"
echo "== cstool record -o $out -- $build/workloads/cstool_workload demo"
"$build/cstool" record -o "$out" -- "$build/workloads/cstool_workload" demo
echo
echo "== cstool report $out"
"$build/cstool" report "$out"
