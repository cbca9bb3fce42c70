#!/usr/bin/env bash
# Session 34, first: (1) kernel profiles (eager / ModelNew / compile) of
# seed 20261224 tasks 0 (max over rows of 28: 0.313 vs compile 0.265), 1
# and 5 (ConvTranspose2d into chains with step ops: 0.469 vs 0.342, 1.077
# vs 0.745) and ConvNeXt-T (6.18 vs 5.23 ms); (2) those transposed
# convolutions and ConvNeXt's depthwise 7x7 shapes NCHW vs channels-last
# (bits and time: a step op keeps a region NCHW today); (3) task 0's
# lane-group kernel at group unrolls 1/2/4/8; (4) fresh seed 20261225 with
# ViT-B/16 and BERT.
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_PROFILE_ROWS=12
select_tasks 20261224:0 20261224:1 20261224:5
for t in /tmp/rt/20261224/0_*.py /tmp/rt/20261224/1_*.py /tmp/rt/20261224/5_*.py bench/models/6_convnext_tiny.py; do
  n=$(basename $t .py)
  timeout 150 bash scripts/gpu-profile-task $t > $OUT/prof_$n.log 2>&1
  echo "prof $n rc $? $(( $(date +%s)-t0 ))s"; grep -E "^layout|Self CUDA time total" $OUT/prof_$n.log | cut -c1-300
done
timeout 120 python3 bench/probes/conv_layout.py --json $OUT/conv_layout36.json --runs 20 \
  --case conv_transpose2d:4,256,56,128:192:5:2:2:0 --case conv_transpose2d:268,32,32,32:192:5:1:0:0 \
  --case conv2d:16,96,56,56:96:7:1:3:0:96 --case conv2d:16,192,28,28:192:7:1:3:0:192 \
  --case conv2d:16,384,14,14:384:7:1:3:0:384 --case conv2d:16,768,7,7:768:7:1:3:0:768 > $OUT/conv_layout36.log 2>&1
echo "conv rc $? $(( $(date +%s)-t0 ))s"; grep "^|" $OUT/conv_layout36.log | cut -c1-250
timeout 100 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;u1:--group-unroll 1;u2:--group-unroll 2;u8:--group-unroll 8;d2:" --plan "" \
  --json $OUT/knobs36.json bench/next-gpu/graphs/s36/s24t0_maxdim28.graph.txt > $OUT/knobs36.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; tail -5 $OUT/knobs36.log | cut -c1-220
left=$(( 570 - ($(date +%s)-t0) ))
[[ $left -gt 120 ]] && timeout $left bash scripts/gpu-bench-slice --seed 20261225 --gen 8 --models 7,10 --json $OUT/slice25.json --runs 30 --fast-math \
  --budget-s $(( left - 15 )) --task-timeout 110 > $OUT/slice25.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|geomean" $OUT/slice25.log | tail -14 | cut -c1-250
