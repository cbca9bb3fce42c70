#!/usr/bin/env bash
# Session 35, second: gpu_model_new over every case with the forced pass
# forcing the layout the measured pass found agreeing (run40: the forced
# channels-last pass of resnet_basic_block differed by 1.3e-3, TF32
# convolutions rounding otherwise channels-last, which the measured pass
# refused too); gpu-cxx-verify (cut off by run40's limit); the public level 2
# tasks 8-10 (resumed from run40's JSON).
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 330 python3 test/Rewrite/gpu_model_new.py $KB_REWRITE $KBV test/fixtures > $OUT/gpu_model_new.log 2>&1
echo "gpu_model_new rc $? $(( $(date +%s)-t0 ))s"; grep -E "ok \(|Error|assert" $OUT/gpu_model_new.log | cut -c1-160
KB_REWRITE=$KB_REWRITE KB_VERIFY=$KBV timeout 110 bash scripts/gpu-cxx-verify > $OUT/cxx_verify.log 2>&1
echo "gpu-cxx-verify rc $? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/cxx_verify.log | cut -c1-200
cp bench/results/2026-12-03-public-l2-s35.json /tmp/l2pub.json
left=$(( 570 - ($(date +%s)-t0) ))
[[ $left -gt 60 ]] && timeout $left python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --levels 2 --tasks 1-10 \
  --resume --prepare 3 --json /tmp/l2pub.json --runs 30 --fast-math --budget-s $(( left - 40 )) --task-timeout 120 \
  --work /tmp/kbw41 > $OUT/l2pub.log 2>&1
echo "l2 rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False|geomean" $OUT/l2pub.log | tail -14 | cut -c1-250
cp /tmp/l2pub.json $OUT/ 2>/dev/null
