#!/usr/bin/env bash
# Written in session 42, not run: (1) verify_all over cross_entropy_flat
# and cross_entropy (row kernels writing the loss's weights beside its
# terms); (2) seed 20261236 task 8 end to end (predicted 0.703 -> ~0.3 ms,
# compile 0.278) and task 7 (0.493, compile 0.313: where its time goes);
# (3) the sum-order probe with its scalar form fixed (rows of 8192 and
# more: which order eager's block takes is still open); (4) a fresh seed,
# 20261237, with two models, in the time left.
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p /tmp/fx72 && cp test/fixtures/graphs/torch-1.13/cross_entropy*.* /tmp/fx72/
timeout 100 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx72 > $OUT/verify72.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify72.log | grep -v "^Exception\|^frame" | tail -6 | cut -c1-250
select_tasks 20261236:7 20261236:8
timeout 130 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV "${dirs[@]}" \
  --json $OUT/sel72.json --runs 20 --fast-math --task-timeout 90 --work /tmp/kbw72 > $OUT/sel72.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "ok |WRONG|FAIL" $OUT/sel72.log | cut -c1-300
timeout 90 python3 bench/probes/aten_sum_order.py --json $OUT/sumorder72.json > $OUT/sumorder72.log 2>&1
echo "sum order rc $? $(( $(date +%s)-t0 ))s"; cut -c1-300 $OUT/sumorder72.log
timed_slice slice72 20261237 6 2,5 585
