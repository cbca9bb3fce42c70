#!/usr/bin/env bash
# Written in session 38, not run: the models whose concatenations are now
# fused, against their session-38 figures (ms: ShuffleNetV2 2.755,
# GoogLeNet 5.157, Inception-v3 7.959, DeepLabV3-MobileNetV3 2.511,
# ViT-B/16 earlier sessions), to see the branch cats' effect (and whether
# the speed check drops standalone cat kernels where ATen's cat is faster).
set -uo pipefail
source bench/next-gpu/prepare.sh
left=$(( 575 - ($(date +%s)-t0) ))
timeout $left bash scripts/gpu-bench-slice --seed 20261233 --gen 0 --models 13,17,18,25,7 \
  --json /tmp/slice56.json --runs 20 --fast-math \
  --budget-s $(( left - 15 )) --task-timeout 150 > $OUT/slice56.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|geomean" $OUT/slice56.log | tail -8 | cut -c1-250
cp /tmp/slice56.json $OUT/ 2>/dev/null
