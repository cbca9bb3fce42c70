#!/usr/bin/env bash
# Session 35, third: (1) seed 20261224 tasks 1 and 5 with exact layouts
# (predicted 0.417 -> ~0.38 ms, 0.903 -> ~0.87; the layout decision in the
# log); (2) a fresh seed (20261227) and BERT with K.attn_mask (predicted
# 9.44 -> ~8.7 ms).
set -uo pipefail
source bench/next-gpu/prepare.sh
select_tasks 20261224:1 20261224:5
KB_RUNTIME_VERBOSE=1 timeout 150 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 140 \
  "${dirs[@]}" --prepare 8 --json $OUT/sel42.json --runs 30 --fast-math --task-timeout 80 --work /tmp/kbw42 > $OUT/sel42.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False|layout:|attention mask" $OUT/sel42.log | cut -c1-250
left=$(( 500 - ($(date +%s)-t0) ))
[[ $left -gt 120 ]] && KB_RUNTIME_VERBOSE=1 timeout $left bash scripts/gpu-bench-slice --seed 20261227 --gen 6 --models 10 \
  --json /tmp/slice27.json --runs 30 --fast-math --budget-s $(( left - 15 )) --task-timeout 150 > $OUT/slice27.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|geomean|attention mask" $OUT/slice27.log | tail -14 | cut -c1-250
cp /tmp/slice27.json $OUT/ 2>/dev/null
