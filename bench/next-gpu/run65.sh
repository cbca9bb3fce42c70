#!/usr/bin/env bash
# Written in session 40, not run: (1) the corpus (63 entries: the PTX
# check that follows a module-scope variable's address, good_sin_in_double
# after the label fix) three times; (2) the fixtures with kernels of the
# same-row softmax (row_softmax_norm) and every torch-1.13 fixture (none of
# the others changed); (3) seed 20261234's task 2 (predicted 0.417 ->
# ~0.27 ms, its region 0.258 -> ~0.11), that seed's tasks 4-7, and VGG-11-BN
# and EfficientNetV2-S (last timed in session 38: 4.936 and 8.093 ms).
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 150 python3 test/verify/corpus.py run $KBV --repeat 3 > $OUT/corpus65.log 2>&1
echo "corpus rc $? $(( $(date +%s)-t0 ))s"; grep -E "BAD|passed|entries" $OUT/corpus65.log | cut -c1-220
timeout 200 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV test/fixtures/graphs/torch-1.13 > $OUT/verify65.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify65.log | grep -v "^Exception\|^frame" | tail -6 | cut -c1-250
timed_slice slice65 20261234 8 19,20 585
