#!/usr/bin/env bash
# Session 33, first (written in session 32, not run): (1) norm kernels
# whose statistics are now products by 1/N and rsqrt (every lane of a row
# computed three double divisions and a square root) and the grouped
# convolution whose bias moved into its epilogue, through kb-verify and
# ModelNew; (2) those statistics against the old form (--division-stats)
# on six norms: predicted a layer norm over 2.96M rows of 28 from ~0.25 ms
# (2.6 TB/s) to ~0.17, over 1.39M rows of 10 likewise, long rows unchanged;
# (3) the tasks behind them end to end: seed 20261207 task 9 (LN over 28,
# 0.253 vs compile 0.162), seed 20261215 task 1 (max_pool1d -> LN over 10,
# 0.138 vs 0.076), seed 20261221 task 5 (grouped conv bias: 0.577 vs 0.463,
# predicted ~0.46), seed 20261222 task 7 (depthwise: unchanged, 0.394 vs
# 0.263); (4) a fresh seed (20261223).
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p /tmp/fx33 && for f in transformer_mlp groupnorm_silu instancenorm_residual cross_row_norms split_bn1d_prologue \
  split_bn2d_few_channels conv_bn_relu_train grouped_conv_bias; do cp test/fixtures/graphs/torch-1.13/$f.* /tmp/fx33/; done
timeout 150 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx33 > $OUT/verify_fx33.log 2>&1
echo "verify rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify_fx33.log | tail -6 | cut -c1-250; grep -c "^ok" $OUT/verify_fx33.log
for c in grouped_conv_bias cross_row_norms; do
  timeout 90 python3 test/Rewrite/gpu_model_new.py $KB_REWRITE $KBV test/fixtures $c > $OUT/mn_$c.log 2>&1
  echo "model_new $c rc $? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/mn_$c.log | cut -c1-250
done
timeout 150 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;div:--division-stats;d2:" --plan "" \
  --json $OUT/knobs_stats.json bench/next-gpu/graphs/s33/*.graph.txt > $OUT/knobs_stats.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; tail -8 $OUT/knobs_stats.log | cut -c1-220
select_tasks 20261207:9 20261215:1 20261221:5 20261222:7
timeout 170 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 160 \
  "${dirs[@]}" --prepare 8 --json $OUT/sel33.json --runs 30 --fast-math --task-timeout 80 --work /tmp/kbw33 > $OUT/sel33.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|True|False" $OUT/sel33.log | cut -c1-250
left=$(( 570 - ($(date +%s)-t0) ))
[[ $left -gt 120 ]] && timeout $left bash scripts/gpu-bench-slice --seed 20261223 --gen 8 --json $OUT/slice23.json --runs 30 --fast-math \
  --budget-s $(( left - 15 )) --task-timeout 100 > $OUT/slice23.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|geomean" $OUT/slice23.log | tail -14 | cut -c1-250
