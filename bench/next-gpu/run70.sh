#!/usr/bin/env bash
# Session 42: (1) which order eager's row sum takes per row length
# (bench/probes/aten_sum_order.py: run69 found AtenReduce's block-a-row
# form 60% off eager's bits on rows of 16384); (2) logsumexp and var over
# rows held in registers or streamed by wider blocks (codegen_knobs.py:
# reductions.py's logsumexp_last 65% and var_last 76% of copy in run69);
# (3) seed 20261235 task 2 with --fast-math (its softmax with expf now:
# predicted accepted, ~1.50 ms); (4) the fresh seed 20261236 with MNASNet
# and MobileViT-S in the time left.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 150 python3 bench/probes/aten_sum_order.py --json $OUT/sumorder70.json > $OUT/sumorder70.log 2>&1
echo "sum order rc $? $(( $(date +%s)-t0 ))s"; cat $OUT/sumorder70.log
g=bench/next-gpu/graphs/red70
timeout 150 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "base:;reg:--register-row-max=4096;reg512:--register-row-max=4096 --row-block=512;rb512:--row-block=512;rb1024:--row-block=1024" \
  --plan "" --json $OUT/knobs70.json $g/*.graph.txt > $OUT/knobs70.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected" $OUT/knobs70.log | cut -c1-200; grep -A8 "^graph region" $OUT/knobs70.log | cut -c1-200
select_tasks 20261235:2
timeout 100 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  "${dirs[@]}" --json $OUT/sel70.json --runs 20 --fast-math --task-timeout 90 --work /tmp/kbw70 > $OUT/sel70.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "ok |WRONG|FAIL" $OUT/sel70.log | cut -c1-250
grep -h "rejected\|slower" /tmp/kbw70/*/*/report.md 2>/dev/null | head -5 | cut -c1-250
timed_slice slice70 20261236 5 15,28 585
