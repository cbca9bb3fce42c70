#!/usr/bin/env bash
# Session 51, run90.sh cut to what ~4 minutes hold (the session's GPU time
# went to refused starts): the three fresh-seed losses to compile timed
# again with verification (predictions in run90.sh: seed 20261291 task 2
# ~0.25 ms against compile's 0.273; seed 20261238 task 4 and seed 20261251
# task 1 nearer compile than run82's / run85's 0.70x), then every region
# of the row_softmax_norm fixture verified (its thread-owned rows).
set -uo pipefail
source bench/next-gpu/prepare.sh
select_tasks 20261291:2 20261238:4 20261251:1
timeout 150 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV "${dirs[@]}" \
  --json $OUT/sel90.json --runs 20 --fast-math --task-timeout 70 --work /tmp/kbw90 > $OUT/sel90.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "ok |WRONG|FAIL" $OUT/sel90.log | cut -c1-300
grep -h "^| kb_" /tmp/kbw90/*/*/rewritten/report.md 2>/dev/null | cut -c1-250
mkdir -p /tmp/fx90 && cp test/fixtures/graphs/torch-1.13/row_softmax_norm.* /tmp/fx90/
timeout 60 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx90 > $OUT/verify90.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; grep -v "^Exception\|^frame" $OUT/verify90.log | tail -8 | cut -c1-250
