#!/usr/bin/env bash
# Session 33, third command: lane groups for contiguous rows of at most 16
# (now the default) through kb-verify on every kernel it changed (three
# fixtures, three test inputs) and ModelNew; the max_pool1d -> layer norm
# over rows of 10 task end to end (predicted 0.110 -> ~0.05 ms).
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p /tmp/fx35 && for f in convt3d_layernorm convt3d_layernorm_step softmax_dtype; do cp test/fixtures/graphs/torch-1.13/$f.* /tmp/fx35/; done
for f in ln_step_7 log_softmax_step_7 reduce_broadcast_back; do cp test/CodeGen/Inputs/$f.* /tmp/fx35/; done
timeout 150 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx35 > $OUT/verify_fx35.log 2>&1
echo "verify rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify_fx35.log | tail -6 | cut -c1-250; grep -c "^ok" $OUT/verify_fx35.log
timeout 90 python3 test/Rewrite/gpu_model_new.py $KB_REWRITE $KBV test/fixtures convt3d_layernorm > $OUT/mn35.log 2>&1
echo "model_new rc $? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/mn35.log | cut -c1-200
select_tasks 20261215:1
timeout 80 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 70 \
  "${dirs[@]}" --prepare 8 --json $OUT/sel35.json --runs 30 --fast-math --task-timeout 60 --work /tmp/kbw35 > $OUT/sel35.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False" $OUT/sel35.log | cut -c1-250
