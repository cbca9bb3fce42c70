#!/usr/bin/env bash
# Session 40: kb-verify's op-by-op fp32 reference (special-value trials) on
# the corpus and on torchvision-0.26's kernels (MobileNetV3-Large's region
# 57 was rejected by run61: NaN where eager -0.375, truth -0), then run56's
# models (branch cats fused) in the time left.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 120 python3 test/verify/corpus.py run $KBV > $OUT/corpus62.log 2>&1
echo "corpus rc $? $(( $(date +%s)-t0 ))s"; grep -E "BAD|passed|entries" $OUT/corpus62.log | cut -c1-220
timeout 150 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV test/fixtures/graphs/torchvision-0.26 > $OUT/verify62.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify62.log | grep -v "^Exception\|^frame" | tail -6 | cut -c1-250
timed_slice slice56 20261233 0 13,17,18,25,7 585
