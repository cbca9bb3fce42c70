#!/usr/bin/env bash
# Session 32, third: the fixtures whose strided rows one thread now holds
# in registers (rows up to 128) through kb-verify; then a fresh seed
# (20261222, 8 tasks) and two real models (EfficientNet-B0, DenseNet-121)
# end to end with this session's defaults.
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p /tmp/fx31 && for f in softmax_strided_step split_softmax_strided sweep_log_softmax_mid; do cp test/fixtures/graphs/torch-1.13/$f.* /tmp/fx31/; done
timeout 80 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx31 > $OUT/verify_fx31.log 2>&1
echo "verify rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify_fx31.log | tail -4 | cut -c1-250; grep -c "^ok" $OUT/verify_fx31.log
left=$(( 570 - ($(date +%s)-t0) ))
timeout $left bash scripts/gpu-bench-slice --seed 20261222 --gen 8 --models 3,4 --json $OUT/slice22.json --runs 30 --fast-math \
  --budget-s $(( left - 15 )) --task-timeout 120 > $OUT/slice22.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|geomean" $OUT/slice22.log | tail -16 | cut -c1-250
