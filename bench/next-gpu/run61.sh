#!/usr/bin/env bash
# Written in session 39, not run: what session 39 built after its last GPU
# command and what it left open. (1) The corpus three times: NVRTC now has
# no include path and gets the toolkit headers in memory (the fp16/bf16
# entries include cuda_fp16.h / cuda_bf16.h on this host's toolkit). (2)
# torchvision-0.26's kernels again (MobileNetV3-Large region 57: one NaN
# where a batch norm's output lies beyond float32's range, NOTES session 39).
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 200 python3 test/verify/corpus.py run $KBV --repeat 3 > $OUT/corpus61.log 2>&1
echo "corpus rc $? $(( $(date +%s)-t0 ))s"; grep -E "BAD|passed|entries" $OUT/corpus61.log | cut -c1-220
left=$(( 585 - ($(date +%s) - t0) ))
timeout $left python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV test/fixtures/graphs/torchvision-0.26 > $OUT/verify61.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify61.log | grep -v "^Exception\|^frame" | tail -6 | cut -c1-250
