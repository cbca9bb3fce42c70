#!/usr/bin/env bash
# Written in session 34, not run: (1) BERT and GPT-2 with K.attn_mask
# (predicted BERT 9.44 -> ~8.7 ms; KB_RUNTIME_VERBOSE shows each site's
# decision); (2) the layer norm over rows of 3584 (seed 20261226 task 0:
# 0.059 vs compile 0.053) staged (default) against registers and wider
# blocks; (3) seed 20261224 tasks 1 and 5 with exact layouts (the transposed
# convolution now may run channels-last: predicted 0.417 -> ~0.38 ms,
# 0.903 -> ~0.87; KB_RUNTIME_VERBOSE shows the layout decision); (4) the
# rest of seed 20261226.
set -uo pipefail
source bench/next-gpu/prepare.sh
KB_RUNTIME_VERBOSE=1 timeout 150 bash scripts/gpu-profile-task bench/models/10_bert_encoder.py > $OUT/prof_bert39.log 2>&1
echo "prof bert rc $? $(( $(date +%s)-t0 ))s"; grep -E "attention mask|^kb_runtime: (forward|CUDA)|fmha|Self CUDA time total" $OUT/prof_bert39.log | cut -c1-200
timeout 100 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;r256:--register-row-max 4096;r512:--register-row-max 4096 --row-block 512;st:--shared-row-max 1;d2:" --plan "" \
  --json $OUT/knobs39.json bench/next-gpu/graphs/s39/*.graph.txt > $OUT/knobs39.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/knobs39.log | cut -c1-220
select_tasks 20261224:1 20261224:5
KB_RUNTIME_VERBOSE=1 timeout 150 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 140 \
  "${dirs[@]}" --prepare 8 --json $OUT/sel39.json --runs 30 --fast-math --task-timeout 80 --work /tmp/kbw39 > $OUT/sel39.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False|layout:" $OUT/sel39.log | cut -c1-250
left=$(( 560 - ($(date +%s)-t0) ))
[[ $left -gt 120 ]] && timeout $left bash scripts/gpu-bench-slice --seed 20261226 --gen 8 --models 10,11 \
  --from bench/results/2026-12-03-slice26-s34.json --json /tmp/slice26b.json --runs 30 --fast-math \
  --budget-s $(( left - 15 )) --task-timeout 150 > $OUT/slice26b.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|geomean" $OUT/slice26b.log | tail -12 | cut -c1-250
cp /tmp/slice26b.json $OUT/ 2>/dev/null
