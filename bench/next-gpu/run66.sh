#!/usr/bin/env bash
# Written in session 40, not run: issue 25's 20 repetitions of the corpus
# (63 entries; run61 took 46 s for 60 x 3, so ~8 minutes), every verdict as
# expected in every repetition.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 560 python3 test/verify/corpus.py run $KBV --repeat 20 > $OUT/corpus66.log 2>&1
echo "corpus rc $? $(( $(date +%s)-t0 ))s"; grep -E "BAD|passed|entries" $OUT/corpus66.log | cut -c1-220
