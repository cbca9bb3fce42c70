#!/usr/bin/env bash
# Session 33, second command: (1) the online pass over long rows a block
# streams (log_softmax over 3400 rows of 65536: predicted 0.890 -> ~0.66
# ms, two reads and a write) through kb-verify, and contiguous rows of at
# most 16 read by lane groups (--short-row-lanes) against one thread a row
# on layer norms over rows of 10 and 14 (predicted 10-40% faster: a warp
# load then covers whole rows instead of one float every 40 bytes); (2)
# the tasks behind them end to end (gen-20261223 task 0, gen-20261215
# task 1), through the driver as lib/Driver now runs it; (3) a fresh seed
# (20261224) with ConvNeXt-T (depthwise convs and layer norms).
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p /tmp/fx34 && cp test/CodeGen/Inputs/log_softmax_65536.* /tmp/fx34/ && \
  for f in grouped_conv_bias cross_row_norms; do cp test/fixtures/graphs/torch-1.13/$f.* /tmp/fx34/; done
timeout 120 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx34 > $OUT/verify_fx34.log 2>&1
echo "verify rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify_fx34.log | tail -4 | cut -c1-250; grep -c "^ok" $OUT/verify_fx34.log
timeout 90 python3 test/Rewrite/gpu_model_new.py $KB_REWRITE $KBV test/fixtures grouped_conv_bias > $OUT/mn34.log 2>&1
echo "model_new rc $? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/mn34.log | cut -c1-200
timeout 120 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;l:--short-row-lanes;d2:" --plan "" \
  --json $OUT/knobs34.json bench/next-gpu/graphs/s34/*.graph.txt > $OUT/knobs34.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; tail -5 $OUT/knobs34.log | cut -c1-220
select_tasks 20261223:0 20261215:1
timeout 110 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 100 \
  "${dirs[@]}" --prepare 8 --json $OUT/sel34.json --runs 30 --fast-math --task-timeout 80 --work /tmp/kbw34 > $OUT/sel34.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False" $OUT/sel34.log | cut -c1-250
left=$(( 565 - ($(date +%s)-t0) ))
[[ $left -gt 120 ]] && timeout $left bash scripts/gpu-bench-slice --seed 20261224 --gen 6 --models 6 --json $OUT/slice24.json --runs 30 --fast-math \
  --budget-s $(( left - 15 )) --task-timeout 110 > $OUT/slice24.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|geomean" $OUT/slice24.log | tail -12 | cut -c1-250
