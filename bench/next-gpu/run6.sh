#!/usr/bin/env bash
# Session 26, one command: (1) the layer norm in ATen's RowwiseMoments
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
mkdir -p /tmp/kbs
KB_REWRITE=$KB_REWRITE timeout $(( 585 - ($(date +%s)-t0) )) bash scripts/gpu-bench-slice \
  --seed 20261211 --gen 8 --json $OUT/slice.json --runs 30 --fast-math \
  --budget-s $(( 560 - ($(date +%s)-t0) )) --task-timeout 110 --work /tmp/kbs/w > $OUT/slice.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"
grep -E "^\[|vs comp|True|False|correct" $OUT/slice.log | cut -c1-220
tar czf $OUT/slice-work.tgz -C /tmp/kbs w 2>/dev/null; ls -la $OUT
