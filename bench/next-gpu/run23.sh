#!/usr/bin/env bash
# Session 30: a fresh seed, 20261218 (8 generated tasks), with this
# session's kernels (split passes in alternating order, strided views).
set -uo pipefail
source bench/next-gpu/prepare.sh
left=$(( 515 - ($(date +%s)-t0) ))
timeout $left bash scripts/gpu-bench-slice --seed 20261218 --gen 8 --json $OUT/slice.json \
  --runs 30 --fast-math --budget-s $((left - 15)) --task-timeout 110 > $OUT/slice.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False|geomean" $OUT/slice.log | cut -c1-250 | tail -14
