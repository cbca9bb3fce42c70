#!/usr/bin/env bash
# Session 31: training batch norms against torch.compile (seed 20261219
# tasks 0 and 7 at 0.80x and 0.62x compile: BatchNorm1d over 4095 channels
# of 11193, and over 16384 channels of 1414 after sqrt(|x|); seed 20261218
# task 0, BatchNorm2d over 64 channels of 1236 x 3584, 0.97x). Split
# layouts: the default, lanes over 4 channels read as float4 (now also
# through a pointwise prologue: --split-quad), chunks, block shapes. Then
# the fixture of the prologue quad through kb-verify; cross-row kernels
# after a softmax.
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p /tmp/qf && cp test/fixtures/graphs/torch-1.13/split_bn1d_prologue.* test/fixtures/graphs/torch-1.13/adaptive_pool_windows.* /tmp/qf/
timeout 60 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/qf > $OUT/verify_q.log 2>&1
echo "verify rc $? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/verify_q.log | cut -c1-250
G=bench/next-gpu/graphs/s31bn
timeout 300 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "base:;q:--split-quad;q4:--split-quad --split-chunks 4;q8:--split-quad --split-chunks 8;c4:--split-chunks 4;c16:--split-chunks 16;c64:--split-chunks 64;w:--split-shape 1024,1,16;base2:" --plan "" \
  --json $OUT/knobs_bn.json $G/*.graph.txt > $OUT/knobs_bn.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; tail -6 $OUT/knobs_bn.log | cut -c1-220
# Cross-row kernels whose first stage is a softmax (seed 20261217 tasks 50,
# 83, 2, 137: softmax or log_softmax, then a layer norm, softmax or group
# norm over other rows): verified, and timed against their ATen ops.
timeout 200 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "a:" --plan "" --json $OUT/knobs_xr2.json bench/next-gpu/graphs/s31xr/*.graph.txt > $OUT/knobs_xr2.log 2>&1
echo "knobs_xr2 rc $? $(( $(date +%s)-t0 ))s"; grep -E "^gen|^cross|Phase" $OUT/knobs_xr2.log | tail -14 | cut -c1-220
