#!/usr/bin/env bash
# Session 38: issue 24's real models timed end to end, second part: Swin-T
# (its model file fixed: torchvision's swin_t sets stochastic_depth_prob
# itself) and models 23-30 (MaxViT-T, R3D-18, DeepLabV3-MobileNetV3, timm
# MLP-Mixer, PoolFormer, MobileViT, LeViT, CSPDarkNet-53).
set -uo pipefail
source bench/next-gpu/prepare.sh
left=$(( 585 - ($(date +%s)-t0) ))
timeout $left bash scripts/gpu-bench-slice --seed 20261232 --gen 0 --models 16,23,24,25,26,27,28,29,30 \
  --json /tmp/slice52.json --runs 20 --fast-math \
  --budget-s $(( left - 15 )) --task-timeout 150 > $OUT/slice52.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|geomean" $OUT/slice52.log | tail -14 | cut -c1-250
cp /tmp/slice52.json $OUT/ 2>/dev/null
