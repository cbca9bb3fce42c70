#!/usr/bin/env bash
# Session 35, first: issue 23's last evidence after the driver refactor.
# (1) The GPU tests as ctest runs them (scripts/gpu-tests: gpu-rewrite-model,
# gpu-model-search, gpu-cxx-rewrite, gpu-cxx-verify); (2) the public level 2
# (tasks 1-10) against bench/results/2026-12-01-kernelbench-l2-s12-tf32.json
# (2.36x eager, 1.14x compile): predicted unchanged within timing noise.
set -uo pipefail
source bench/next-gpu/prepare.sh
KB_REWRITE=$KB_REWRITE timeout 240 bash scripts/gpu-tests > $OUT/gpu_tests.log 2>&1
echo "gpu-tests rc $? $(( $(date +%s)-t0 ))s"; grep -E "^== " $OUT/gpu_tests.log | cut -c1-200
left=$(( 570 - ($(date +%s)-t0) ))
timeout $left python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --levels 2 --tasks 1-10 \
  --prepare 10 --json /tmp/l2pub.json --runs 30 --fast-math --budget-s $(( left - 40 )) --task-timeout 120 \
  --work /tmp/kbw40 > $OUT/l2pub.log 2>&1
echo "l2 rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False|geomean" $OUT/l2pub.log | tail -14 | cut -c1-250
cp /tmp/l2pub.json $OUT/ 2>/dev/null
