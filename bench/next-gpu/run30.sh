#!/usr/bin/env bash
# Session 32, second: (1) fixtures whose pooling kernels now address
# per-channel operands from the plane (and the new ones) through kb-verify,
# and ModelNew for pools_into_rows and order_free_step; (2) strided rows
# held in registers by one thread, rows of 24 to 200 (--thread-row-max;
# default 16): predicted seed 20261221 task 3 (softmax over 55 strided
# elements, 0.378 ms, compile 0.180) near 0.15; (3) seed 20261221 tasks 1
# (max pool, plane-hoisted bias: 0.741 ms, predicted ~0.5), 3 (default), 4
# (amin now fused before min.dim: 1.503 ms, predicted ~1.0) end to end.
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p /tmp/fx30 && for f in torch-1.13/{pool_chain,conv_pool_mean,conv_reductions_cl,order_free_step,pools_into_rows,sweep_avgpool2d_nopad} \
  torch-2.11/{level2_10_ConvTranspose2d_MaxPool_Hardtanh_Mean_Tanh,level3_5_AlexNet}; do cp test/fixtures/graphs/$f.* /tmp/fx30/; done
timeout 150 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx30 > $OUT/verify_fx30.log 2>&1
echo "verify rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify_fx30.log | tail -8 | cut -c1-250; grep -c "^ok" $OUT/verify_fx30.log
for c in pools_into_rows order_free_step; do
  timeout 80 python3 test/Rewrite/gpu_model_new.py $KB_REWRITE $KBV test/fixtures $c > $OUT/mn_$c.log 2>&1
  echo "model_new $c rc $? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/mn_$c.log | cut -c1-250
done
timeout 200 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "t16:;t32:--thread-row-max 32;t64:--thread-row-max 64;t128:--thread-row-max 128;t256:--thread-row-max 256" --plan "" \
  --json $OUT/knobs_threadrow.json bench/next-gpu/graphs/s32/*.graph.txt > $OUT/knobs_threadrow.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; tail -12 $OUT/knobs_threadrow.log | cut -c1-220
select_tasks 20261221:1 20261221:3 20261221:4
timeout 150 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 140 \
  "${dirs[@]}" --prepare 8 --json $OUT/sel30.json --runs 30 --fast-math --task-timeout 80 --work /tmp/kbw30 > $OUT/sel30.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|True|False" $OUT/sel30.log | cut -c1-250
