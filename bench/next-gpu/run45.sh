#!/usr/bin/env bash
# Session 36: (1) kb-verify over every fixture whose kernels changed (softmax
# holds exp(x - max) once per element; layer norms hold rows up to 3584 in
# registers; rows_staged: short rows staged as a block's tile); (2) the
# short-row and layer-norm probes (graphs/short36) against the old forms:
# predicted softmax over rows of 14 0.473 -> ~0.20 ms, layer norms over
# 2080 / 3072 ~8% faster than --register-row-max 2048; (3) ModelNew of
# rows_staged; (4) seed 20261228 tasks 6 and 1, seed 20261226 task 0
# (predicted 0.468 -> ~0.20 end to end for task 6; 0.059 -> ~0.052 for the
# layer norm over 3584).
set -uo pipefail
source bench/next-gpu/prepare.sh
rm -rf /tmp/vf && mkdir -p /tmp/vf/a /tmp/vf/b /tmp/vf/c
for n in attention cross_row_norms level2_6_Conv3d_Softmax_MaxPool_MaxPool linear_softmax norm_singular rows_registers rows_vec4 softmax_dtype softmax_strided_step split_log_softmax_long split_softmax_strided sweep_log_softmax_mid sweep_softmax_dim0 rows_staged; do
  cp test/fixtures/graphs/torch-1.13/$n.* /tmp/vf/a/; done
cp test/fixtures/graphs/torch-2.11/{attention,linear_softmax,level2_6_Conv3d_Softmax_MaxPool_MaxPool}.* /tmp/vf/b/
cp test/fixtures/graphs/torchvision-0.14/vit_b_16.* test/fixtures/graphs/torchvision-0.26/swin_t.* /tmp/vf/c/
timeout 200 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/vf > $OUT/vf45.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok " $OUT/vf45.log | tail -8 | cut -c1-250
timeout 150 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;lanes:--lane-short-rows;r2k:--register-row-max 2048" --plan "" \
  --json $OUT/knobs45.json bench/next-gpu/graphs/short36/*.graph.txt > $OUT/knobs45.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; grep -A12 "^graph region" $OUT/knobs45.log | cut -c1-200
timeout 90 python3 test/Rewrite/gpu_model_new.py $KB_REWRITE $KBV test/fixtures rows_staged > $OUT/mn45.log 2>&1
echo "gpu_model_new rc $? $(( $(date +%s)-t0 ))s"; grep -E "ok \(|Error|assert" $OUT/mn45.log | cut -c1-200
select_tasks 20261228:6 20261228:1 20261226:0
left=$(( 585 - ($(date +%s)-t0) ))
timeout $left python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s $(( left - 10 )) \
  "${dirs[@]}" --prepare 8 --json $OUT/sel45.json --runs 30 --fast-math --task-timeout 140 --work /tmp/kbw45 > $OUT/sel45.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False" $OUT/sel45.log | cut -c1-250
