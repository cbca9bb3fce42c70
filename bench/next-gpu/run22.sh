#!/usr/bin/env bash
# Session 30, first measurement of its own changes: (1) split row kernels
# whose later passes take the items in reverse order (the last items read
# are still in L2): --split-forward (the old order) against the default,
# over the 19 grid-barrier kernels of seed 20261217's 148 tasks and
# gen-20261216 task 6 (predicted: 2-6% faster on 0.3-1 GB inputs, nothing
# on inputs many times L2); (2) a fresh seed, 20261218 (8 generated tasks),
# with the LLaMA decoder end to end (capture fixed: predicted replay well
# under eager's 7.6 ms).
set -uo pipefail
source bench/next-gpu/prepare.sh
G=bench/next-gpu/graphs/s30
timeout 190 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "fwd:--split-forward;rev:" --plan "grid barrier" \
  --json $OUT/knobs_reverse.json $G/*.graph.txt > $OUT/knobs_reverse.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; tail -30 $OUT/knobs_reverse.log | cut -c1-200
left=$(( 560 - ($(date +%s)-t0) ))
timeout $left bash scripts/gpu-bench-slice --seed 20261218 --gen 8 --models 12 --json $OUT/slice.json \
  --runs 30 --fast-math --budget-s $((left - 15)) --task-timeout 110 > $OUT/slice.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False|geomean" $OUT/slice.log | cut -c1-250 | tail -14
