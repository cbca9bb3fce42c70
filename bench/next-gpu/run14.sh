#!/usr/bin/env bash
# Session 28's second command: a fresh seed, 20261214 (8 generated tasks)
# and models 1 (ResNet-50), 10 (BERT encoder), 12 (LLaMA decoder), then
# gen-20261212 task 3's rows-of-64 probe with the time left.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 500 scripts/gpu-bench-slice --seed 20261214 --gen 8 --models 1,10,12 --json $OUT/slice.json --runs 30 --fast-math --budget-s 470 --task-timeout 110 > $OUT/slice.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|vs comp|True|False|correct" $OUT/slice.log | cut -c1-220
# Part 3: gen-20261212 task 3's L1 norm over 4.1M rows of 64 (0.281 ms,
# 3.8 TB/s; compile 0.264): more row groups in flight per warp trip.
timeout $(( 585 - ($(date +%s)-t0) )) python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "base:--fast-math;gu2:--fast-math --group-unroll 2;gu4:--fast-math --group-unroll 4" \
  --json $OUT/probe-l1rows64.json bench/next-gpu/graphs/gen20261212_3_l1rows64.graph.txt > $OUT/probe-l1rows64.log 2>&1
echo "probe2 rc $? $(( $(date +%s)-t0 ))s"; grep -E "accepted|rejected|failed" $OUT/probe-l1rows64.log | cut -c1-200
ls -la $OUT
