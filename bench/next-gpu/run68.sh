#!/usr/bin/env bash
# Session 41: (1) sums and means over trailing rows in ATen's reduce order
# (AtenReduce.cpp) verified, each promising eager's bits (verify_all fails
# any with eager_mismatches > 0): fixture aten_sum_rows (a block a row of
# 16384, a warp a row of 512 with a mean, a sum before a comparison) and
# rows_registers' mean over rows of 1500; (2) seed 20261234 task 7 (wrong
# at 1e-4 in run65 and run67: predicted correct now, its sum eager's bits)
# and task 6 (kl_div split into log_softmax..sub and the sum: predicted
# ~1.3 ms, run65 2.097, compile 0.824); (3) the fresh seed 20261235 with
# MobileNetV2 in the time left.
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p /tmp/fx68
cp test/fixtures/graphs/torch-1.13/aten_sum_rows.* test/fixtures/graphs/torch-1.13/rows_registers.* /tmp/fx68/
timeout 100 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx68 > $OUT/verify68.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; grep -v "^Exception\|^frame" $OUT/verify68.log | tail -12 | cut -c1-250
select_tasks 20261234:6 20261234:7
timeout 130 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --levels 3 --tasks 7 \
  "${dirs[@]}" --json $OUT/sel68.json --runs 20 --fast-math --task-timeout 90 --work /tmp/kbw68 > $OUT/sel68.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "ok |WRONG|FAIL" $OUT/sel68.log | cut -c1-250
timed_slice slice68 20261235 6 22 470
