#!/usr/bin/env bash
# Session 36: (1) the layer norm over rows of 3584 (seed 20261226 task 0:
# 0.059 vs compile 0.053) staged (default) against registers and wider
# blocks; (2) a fresh seed (20261228) with two real models in rotation
# (MobileNetV3-Large, the Llama decoder).
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 100 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;r256:--register-row-max 4096;r512:--register-row-max 4096 --row-block 512;st:--shared-row-max 1;d2:" --plan "" \
  --json $OUT/knobs44.json bench/next-gpu/graphs/s39/*.graph.txt > $OUT/knobs44.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; tail -8 $OUT/knobs44.log | cut -c1-220
left=$(( 570 - ($(date +%s)-t0) ))
timeout $left bash scripts/gpu-bench-slice --seed 20261228 --gen 8 --models 2,12 \
  --json /tmp/slice28.json --runs 30 --fast-math \
  --budget-s $(( left - 15 )) --task-timeout 150 > $OUT/slice28.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|geomean" $OUT/slice28.log | tail -14 | cut -c1-250
cp /tmp/slice28.json $OUT/ 2>/dev/null
