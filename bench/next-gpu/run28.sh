#!/usr/bin/env bash
# Session 31, last: the cross-row fixture with a plain reduction as the
# final stage (BatchNorm2d -> sigmoid -> var over each sample's planes)
# through kb-verify and ModelNew.
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p /tmp/xrf2 && cp test/fixtures/graphs/torch-1.13/cross_row_norms.* /tmp/xrf2/
timeout 60 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/xrf2 > $OUT/verify_xr3.log 2>&1
echo "verify rc $? $(( $(date +%s)-t0 ))s"; tail -6 $OUT/verify_xr3.log | cut -c1-250
timeout 80 python3 test/Rewrite/gpu_model_new.py $KB_REWRITE $KBV test/fixtures cross_row_norms > $OUT/mn_xr3.log 2>&1
echo "model_new rc $? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/mn_xr3.log | cut -c1-250
