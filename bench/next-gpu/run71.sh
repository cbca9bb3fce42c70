#!/usr/bin/env bash
# Session 42, the last command of the session: (1) verify_all over
# aten_sum_rows (its block-form sums now promise no bits; the warp forms
# must still be eager's) and the row fixtures; (2) more candidate orders for
# eager's long-row sum (aten_sum_order.py: transposed mapping, warps' trees
# before the tree over warps, no float4s); (3) the corpus three times (issue
# 25's repetitions); (4) seed 20261234 task 7 (rows of 32768, the block
# form: predicted still correct), seed 20261236 task 1 (max.dim values no
# longer a step op: predicted 0.847 -> ~0.52 ms, compile 0.520) and tasks 5-9.
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p /tmp/fx71 && cp test/fixtures/graphs/torch-1.13/{aten_sum_rows,rows_registers,rows_staged}.* /tmp/fx71/
timeout 120 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx71 > $OUT/verify71.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; grep -v "^Exception\|^frame" $OUT/verify71.log | grep -i "aten_sum\|accepted, " | cut -c1-200
timeout 90 python3 bench/probes/aten_sum_order.py --json $OUT/sumorder71.json > $OUT/sumorder71.log 2>&1
echo "sum order rc $? $(( $(date +%s)-t0 ))s"; cut -c1-250 $OUT/sumorder71.log
timeout 120 python3 test/verify/corpus.py run $KBV --repeat 3 > $OUT/corpus71.log 2>&1
echo "corpus rc $? $(( $(date +%s)-t0 ))s"; grep -E "BAD|passed|entries" $OUT/corpus71.log | cut -c1-220
select_tasks 20261234:7 20261236:1 20261236:5 20261236:6 20261236:7 20261236:8 20261236:9
left=$(( 470 - ($(date +%s)-t0) ))
timeout $left python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV "${dirs[@]}" --budget-s $(( left - 20 )) \
  --json $OUT/sel71.json --runs 20 --fast-math --task-timeout 90 --work /tmp/kbw71 > $OUT/sel71.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "ok |WRONG|FAIL|geomean|correct" $OUT/sel71.log | cut -c1-300
