#!/usr/bin/env bash
# Session 51 (~6 min; repack dist first). (1) A softmax over the rows of
# the stage it feeds, in thread-owned strided rows (lib/CodeGen/CrossRow.cpp
# sameRowSoftmax's Thread case): every region of the row_softmax_norm
# fixture verified (its new region 5: softmax -> log_softmax over the middle
# dim of [4096, 64, 64]); seed 20261291 task 2 (bmm -> softmax(0) ->
# softmax(1) -> log_softmax(1) -> expm1 -> div) timed again: prediction its
# second region 0.243 -> ~0.04 ms, the task ~0.25 ms against compile's
# 0.273 (run89: 0.463, 0.59x). (2) Profiles of the other two fresh-seed
# losses to compile, never looked at: seed 20261238 task 4 (conv_transpose2d
# -> minimum -> neg -> sub -> adaptive_max_pool2d -> mean, 0.70x, run82;
# kb-simplify now folds the mean of one element, so the pool is a plain
# row reduction instead of a block per output) and
# seed 20261251 task 1 (softmax over a middle dim of 48 -> clamp_max ->
# layer_norm(255) -> log1p(abs), 0.70x, run85; its phase-2 statistics index
# now 32-bit).
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p /tmp/fx90 && cp test/fixtures/graphs/torch-1.13/row_softmax_norm.* /tmp/fx90/
timeout 150 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx90 > $OUT/verify90.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; grep -v "^Exception\|^frame" $OUT/verify90.log | tail -8 | cut -c1-250
select_tasks 20261291:2
timeout 150 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV "${dirs[@]}" \
  --json $OUT/sel90.json --runs 20 --fast-math --task-timeout 120 --work /tmp/kbw90 > $OUT/sel90.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "ok |WRONG|FAIL" $OUT/sel90.log | cut -c1-300
grep -h "^| kb_" /tmp/kbw90/*/*/rewritten/report.md 2>/dev/null | cut -c1-250
select_tasks 20261238:4 20261251:1
for t in /tmp/rt/20261238/4_*.py /tmp/rt/20261251/1_*.py; do
  timeout 150 bash scripts/gpu-profile-task $t > $OUT/prof90_$(basename $(dirname $t)).log 2>&1
  echo "prof $t rc $? $(( $(date +%s)-t0 ))s"
done
(cd $OUT && tar czf logs90.tgz *.log)
