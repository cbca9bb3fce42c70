#!/usr/bin/env bash
# Session 34, second: (1) the convolution bias moved into epilogues that
# read the convolution's output twice (`x * sigmoid(x)`), through kb-verify
# (seed 20261224 tasks 1 and 5, ConvTranspose2d; bits against eager);
# (2) those tasks end to end: predicted task 1 0.469 -> ~0.40 ms (ATen's
# bias pass 0.070 of the 0.472 ms profiled), task 5 1.077 -> ~0.93;
# (3) ViT-B/16 and BERT (seed 20261225's slice ran out of time before them).
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 150 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV bench/next-gpu/graphs/s36 > $OUT/verify37.log 2>&1
echo "verify rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify37.log | tail -6 | cut -c1-250; grep "^ok" $OUT/verify37.log | cut -c1-250
select_tasks 20261224:1 20261224:5
timeout 150 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 140 \
  "${dirs[@]}" --prepare 8 --json $OUT/sel37.json --runs 30 --fast-math --task-timeout 80 --work /tmp/kbw37 > $OUT/sel37.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False" $OUT/sel37.log | cut -c1-250
left=$(( 560 - ($(date +%s)-t0) ))
[[ $left -gt 120 ]] && timeout $left bash scripts/gpu-bench-slice --seed 20261225 --gen 0 --models 7,10 --json /tmp/slice25m.json --runs 30 --fast-math \
  --budget-s $(( left - 15 )) --task-timeout 200 > $OUT/slice25m.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|geomean" $OUT/slice25m.log | tail -6 | cut -c1-250
cp /tmp/slice25m.json $OUT/ 2>/dev/null
