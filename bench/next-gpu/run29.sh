#!/usr/bin/env bash
# Session 32, first: (1) poolings folded into the reduction after them
# (fixture pools_into_rows, and adaptive_pool_windows whose index changed)
# through kb-verify and ModelNew; (2) gen-20261219 task 1 end to end
# (before: 0.38x torch.compile; predicted >= 1x: one split kernel over 35 MB
# instead of 128 lane groups); (3) a fresh seed (20261221), 8 tasks, with
# session 31's chunk and quad defaults.
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p /tmp/pir && cp test/fixtures/graphs/torch-1.13/{pools_into_rows,adaptive_pool_windows}.* /tmp/pir/
timeout 90 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/pir > $OUT/verify_pir.log 2>&1
echo "verify rc $? $(( $(date +%s)-t0 ))s"; tail -8 $OUT/verify_pir.log | cut -c1-250
timeout 80 python3 test/Rewrite/gpu_model_new.py $KB_REWRITE $KBV test/fixtures pools_into_rows > $OUT/mn_pir.log 2>&1
echo "model_new rc $? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/mn_pir.log | cut -c1-250
select_tasks 20261219:1
timeout 100 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 90 \
  "${dirs[@]}" --prepare 8 --json $OUT/sel_pir.json --runs 30 --fast-math --task-timeout 80 --work /tmp/kbw29 > $OUT/sel_pir.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|True|False" $OUT/sel_pir.log | cut -c1-250
left=$(( 560 - ($(date +%s)-t0) ))
timeout $left bash scripts/gpu-bench-slice --seed 20261221 --gen 8 --json $OUT/slice21.json --runs 30 --fast-math \
  --budget-s $(( left - 20 )) --task-timeout 110 > $OUT/slice21.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|x eager|geomean|compile" $OUT/slice21.log | tail -30 | cut -c1-250
