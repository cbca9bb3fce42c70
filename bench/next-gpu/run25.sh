#!/usr/bin/env bash
# Session 31, after run24 (written in session 30, not run yet): pointwise
# kernels with 1, 2 and 4 float4s a thread (`--pointwise-vectors`, all
# loads issued first), over 8 large pointwise regions of seeds 20261217 and
# 20261218 (elu over 82M elements: our kernel 0.166 ms, ATen's 0.158, at
# 4.15 TB/s; a 6-op chain with erf and a trunc division at 0.89x compile).
# Predicted: 2 float4s a thread +2-5% where the kernel is at 3.9-4.0 TB/s
# (64 KB in flight an SM instead of 32), nothing on instruction-bound
# chains.
set -uo pipefail
source bench/next-gpu/prepare.sh
G=bench/next-gpu/graphs/s30pw
timeout 200 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "v1:;v2:--pointwise-vectors 2;v4:--pointwise-vectors 4;v1b:" --plan "One pass" \
  --json $OUT/knobs_pointwise.json $G/*.graph.txt > $OUT/knobs_pointwise.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; tail -14 $OUT/knobs_pointwise.log | cut -c1-200
