#!/usr/bin/env bash
# Written in session 38, not run: the models not yet timed correct (GhostNet
# with its functional dropout off, Whisper with its decoder heads fixed),
# CLIP text (its causal mask), and a fresh seed (20261233, 6 generated
# tasks).
set -uo pipefail
source bench/next-gpu/prepare.sh
left=$(( 575 - ($(date +%s)-t0) ))
timeout $left bash scripts/gpu-bench-slice --seed 20261233 --gen 6 --models 31,34,37 \
  --json /tmp/slice55.json --runs 20 --fast-math \
  --budget-s $(( left - 15 )) --task-timeout 150 > $OUT/slice55.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|geomean" $OUT/slice55.log | tail -12 | cut -c1-250
cp /tmp/slice55.json $OUT/ 2>/dev/null
