#!/usr/bin/env bash
# Session 39: where the time of a 4.3 GB job goes (L1-5's region timed out
# at 20 s in run58): the job with timing, without, without special values;
# then the corpus with the "order" entries.
set -uo pipefail
source bench/next-gpu/prepare.sh
for j in nospecial notiming full; do
  s=$(date +%s%N); $KBV --job .carry/prof/$j.json --no-cache > $OUT/prof-$j.json 2>$OUT/prof-$j.err
  rc=$?; echo "$j rc $rc $(( ($(date +%s%N) - s) / 1000000 )) ms $(head -c 300 $OUT/prof-$j.json)"
done
timeout 100 python3 test/verify/corpus.py run $KBV --only bad_logsumexp_inf_row_nan,bad_scaled_norm_inf_row_nan,good_exp_wide_range,good_row_sum_shape_generic > $OUT/corpus59.log 2>&1
echo "corpus rc $?"; grep -E "BAD|passed" $OUT/corpus59.log | cut -c1-200
