#!/usr/bin/env bash
# Session 39, after run57: "nonfinite" has three rules (exact, order, any:
# variances only), module globals are refused only when written or their
# address is taken, and string options reach the helpers as characters.
# The corpus (60 entries), then every fixture kernel again, then the
# torchvision models' kernels as far as time allows.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 150 python3 test/verify/corpus.py run $KBV > $OUT/corpus58.log 2>&1
echo "corpus rc $? $(( $(date +%s)-t0 ))s"; grep -E "BAD|passed|entries" $OUT/corpus58.log | cut -c1-220
for d in torch-2.11 torch-1.13 torchvision-0.26 torchvision-0.14; do
  left=$(( 585 - ($(date +%s) - t0) )); (( left > 20 )) || break
  timeout $left python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV test/fixtures/graphs/$d > $OUT/verify58-$d.log 2>&1
  echo "verify_all $d rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify58-$d.log | grep -v "^Exception\|^frame" | tail -8 | cut -c1-250
done
