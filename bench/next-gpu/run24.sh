#!/usr/bin/env bash
# Session 31's first command (written in session 30, not run yet): a fresh
# seed (20261219, 8 generated tasks), then the CNNs that lost most to
# torch.compile in sessions 25-27 (MobileNetV3-L 0.50x, RegNetY-800MF
# 0.75x, ResNet-50d 0.68x), now that strided views are generated.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 330 bash scripts/gpu-bench-slice --seed 20261219 --gen 8 --json $OUT/slice.json \
  --runs 30 --fast-math --budget-s 315 --task-timeout 110 > $OUT/slice.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False|geomean" $OUT/slice.log | cut -c1-250 | tail -14
left=$(( 575 - ($(date +%s)-t0) ))
timeout $left bash scripts/gpu-bench-slice --seed 20261219 --gen 0 --models 2,5,9 --json $OUT/models.json \
  --runs 30 --fast-math --budget-s $((left - 15)) --task-timeout 120 > $OUT/models.log 2>&1
echo "models rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False|geomean" $OUT/models.log | cut -c1-250 | tail -6
