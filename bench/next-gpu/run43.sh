#!/usr/bin/env bash
# Written in session 35, not run: (1) the channels-last row reductions
# (fixture conv_row_reductions_cl) on the GPU; (2) seed 20261224 task 1,
# whose var over W now has a channels-last kernel (predicted 0.413 ->
# ~0.35 ms; KB_RUNTIME_VERBOSE shows the layout decision); (3) BERT with
# K.attn_mask (predicted 9.44 -> ~8.7 ms) and the rest of seed 20261227;
# (4) gpu-cxx-verify with room to finish.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 120 python3 test/Rewrite/gpu_model_new.py $KB_REWRITE $KBV test/fixtures conv_row_reductions_cl > $OUT/mn43.log 2>&1
echo "gpu_model_new rc $? $(( $(date +%s)-t0 ))s"; grep -E "ok \(|Error|assert" $OUT/mn43.log | cut -c1-200
select_tasks 20261224:1
KB_RUNTIME_VERBOSE=1 timeout 150 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 140 \
  "${dirs[@]}" --prepare 8 --json $OUT/sel43.json --runs 30 --fast-math --task-timeout 140 --work /tmp/kbw43 > $OUT/sel43.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False|layout:" $OUT/sel43.log | cut -c1-250
left=$(( 560 - ($(date +%s)-t0) ))
[[ $left -gt 120 ]] && KB_RUNTIME_VERBOSE=1 timeout $left bash scripts/gpu-bench-slice --seed 20261227 --gen 8 --models 10 \
  --from bench/results/2026-12-03-slice27-s35.json --json /tmp/slice27b.json --runs 30 --fast-math \
  --budget-s $(( left - 15 )) --task-timeout 150 > $OUT/slice27b.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|geomean|attention mask" $OUT/slice27b.log | tail -12 | cut -c1-250
cp /tmp/slice27b.json $OUT/ 2>/dev/null
# A second command: KB_REWRITE=... KB_VERIFY=... timeout 300 bash scripts/gpu-cxx-verify
