#!/usr/bin/env bash
# Session 26: the split kernel of a mean over dim 0 (14112 x 4096) with a
# softplus -> tanh -> mul prologue (gen-20261211 task 1: 0.1975 ms where
# the plain mean took 0.080) under other block shapes: 2 blocks an SM (64
# registers), with unroll 16, and unroll 4.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 200 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "base:--fast-math;p2:--fast-math --split-shape 512,2,8;p2u16:--fast-math --split-shape 512,2,16;u4:--fast-math --split-shape 512,4,4" \
  --plan "aten::mean" --json $OUT/probe-splitprologue.json bench/next-gpu/graphs/gen20261211_1_mean_dim0_prologue.graph.txt > $OUT/probe-splitprologue.log 2>&1
echo "rc $? $(( $(date +%s)-t0 ))s"; cut -c1-160 $OUT/probe-splitprologue.log
