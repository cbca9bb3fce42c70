#!/usr/bin/env bash
# Session 26, one command: (0) softmax in ATen's warp order, rows batched; (1) the layer norm in ATen's RowwiseMoments
# order (512 threads a row) with its loads batched (--moments-batch 1, 4,
# 8 = the new default, 16), on the long odd rows of session 25's probe and
# on gen-20261209 task 5's two regions (92 rows of 65535; predicted 0 bits
# in every variant, and region 0 0.207 -> ~0.08 ms, region 1 0.070 ->
# ~0.04); (2) the fresh seed 20261211 with the time left (logs tarred:
# at most 8 files come back).
set -uo pipefail
source bench/next-gpu/prepare.sh
K="timeout 150 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV"
python3 bench/probes/ln_step_graphs.py -o /tmp/lno 9999x64 65535x92+ > /dev/null
$K --variants "b1:--aten-order-norms --moments-batch 1;b4:--aten-order-norms --moments-batch 4;b8:--aten-order-norms;b16:--aten-order-norms --moments-batch 16;def:" \
  --plan "layer_norm" --json $OUT/probe-moments.json /tmp/lno/*.graph.txt bench/next-gpu/graphs/gen20261209_5_ln65535_step.graph.txt > $OUT/probe-moments.log 2>&1
echo "moments rc $? $(( $(date +%s)-t0 ))s"; grep "bits differ" $OUT/probe-moments.log | cut -c1-150; tail -5 $OUT/probe-moments.log
# Softmax in ATen's warp order with 1, the default (2 rows of 65-128, 4 of
# up to 64) and 4 rows a lane group: predicted 0 bits each; gen-20261206
# task 2's log_softmax over 65 (0.200 ms in run 1) -> ~0.12 ms.
$K --variants "u1:--aten-order-norms --group-unroll 1;def:--aten-order-norms;u4:--aten-order-norms --group-unroll 4" \
  --plan "warp softmax" --json $OUT/probe-warpsoftmax.json test/CodeGen/Inputs/softmax_step_100.graph.txt \
  test/CodeGen/Inputs/log_softmax_step_7.graph.txt bench/next-gpu/graphs/gen20261206_2_log_softmax65_step.graph.txt > $OUT/probe-warpsoftmax.log 2>&1
echo "warpsoftmax rc $? $(( $(date +%s)-t0 ))s"; grep "bits differ" $OUT/probe-warpsoftmax.log | cut -c1-150; tail -5 $OUT/probe-warpsoftmax.log
mkdir -p /tmp/kbs
KB_REWRITE=$KB_REWRITE timeout $(( 585 - ($(date +%s)-t0) )) bash scripts/gpu-bench-slice \
  --seed 20261211 --gen 8 --json $OUT/slice.json --runs 30 --fast-math \
  --budget-s $(( 560 - ($(date +%s)-t0) )) --task-timeout 110 --work /tmp/kbs/w > $OUT/slice.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"
grep -E "^\[|vs comp|True|False|correct" $OUT/slice.log | cut -c1-220
tar czf $OUT/slice-work.tgz -C /tmp/kbs w 2>/dev/null; ls -la $OUT
