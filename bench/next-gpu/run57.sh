#!/usr/bin/env bash
# Session 39: kb-verify's new checks (issue "Nobody gets in") on the GPU:
# the corpus with its 14 new entries, then every fixture kernel again (no
# correct kernel may be refused by the per-element bounds, the guard
# granules, the checked timing loop or the tightened "nonfinite": "any"),
# and bool_masks / rotary_cat / strided_views through ModelNew (run54's
# autograd check threw on the mask input).
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 150 python3 test/verify/corpus.py run $KBV > $OUT/corpus57.log 2>&1
echo "corpus rc $? $(( $(date +%s)-t0 ))s"; grep -E "BAD|passed|entries" $OUT/corpus57.log | cut -c1-220
timeout 150 python3 test/Rewrite/gpu_model_new.py $KB_REWRITE $KBV test/fixtures bool_masks rotary_cat strided_views > $OUT/modelnew57.log 2>&1
echo "gpu_model_new rc $? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/modelnew57.log | cut -c1-200
for d in torch-2.11 torch-1.13; do
  left=$(( 585 - ($(date +%s) - t0) )); (( left > 20 )) || break
  timeout $left python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV test/fixtures/graphs/$d > $OUT/verify57-$d.log 2>&1
  echo "verify_all $d rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify57-$d.log | tail -12 | cut -c1-250
done
