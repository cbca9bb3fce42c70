#!/usr/bin/env bash
# Session 39, last: the comparison's eager profile (envelope, huge-element
# error) made once per output and trial instead of per launch, and codegen
# jobs' watchdog grown with their bytes: L1-5's 8.6 GB job (timed out at 20 s
# in run58, 22.3 s with timing in run59), the corpus, and the torch-2.11
# fixtures' kernels again.
set -uo pipefail
source bench/next-gpu/prepare.sh
s=$(date +%s%N); $KBV --job .carry/prof/full.json --no-cache > $OUT/prof60-full.json 2>$OUT/prof60.err
rc=$?; echo "L1-5 job rc $rc $(( ($(date +%s%N) - s) / 1000000 )) ms $(head -c 120 $OUT/prof60-full.json)"
timeout 120 python3 test/verify/corpus.py run $KBV > $OUT/corpus60.log 2>&1
echo "corpus rc $? $(( $(date +%s)-t0 ))s"; grep -E "BAD|passed|entries" $OUT/corpus60.log | cut -c1-220
left=$(( 270 - ($(date +%s) - t0) ))
timeout $left python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV test/fixtures/graphs/torch-2.11 > $OUT/verify60.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify60.log | grep -v "^Exception\|^frame" | tail -6 | cut -c1-250
