#!/usr/bin/env bash
# Session 34, third: (1) the C++ rewrite through the new driver
# (lib/Driver/CxxRewrite.cpp, one option parser, verdicts through the
# client): gpu-cxx-verify and gpu-cxx-rewrite as ctest runs them; (2) BERT's
# kernel profile (9.44 ms against eager's 9.42: where the regions' gain
# goes); (3) a fresh seed (20261226) with the convolution-bias change.
set -uo pipefail
source bench/next-gpu/prepare.sh
KB_REWRITE=$KB_REWRITE KB_VERIFY=$KBV timeout 200 bash scripts/gpu-cxx-verify > $OUT/cxx_verify.log 2>&1
echo "gpu-cxx-verify rc $? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/cxx_verify.log | cut -c1-200
KB_REWRITE=$KB_REWRITE timeout 150 bash scripts/gpu-cxx-rewrite --runs 20 > $OUT/cxx_rewrite.log 2>&1
echo "gpu-cxx-rewrite rc $? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/cxx_rewrite.log | cut -c1-200
KB_PROFILE_ROWS=18 timeout 120 bash scripts/gpu-profile-task bench/models/10_bert_encoder.py > $OUT/prof_bert.log 2>&1
echo "prof bert rc $? $(( $(date +%s)-t0 ))s"; grep -E "^kb_runtime: (forward|CUDA)|Self CUDA time total" $OUT/prof_bert.log | cut -c1-200
left=$(( 515 - ($(date +%s)-t0) ))
[[ $left -gt 100 ]] && timeout $left bash scripts/gpu-bench-slice --seed 20261226 --gen 8 --json /tmp/slice26.json --runs 30 --fast-math \
  --budget-s $(( left - 15 )) --task-timeout 100 > $OUT/slice26.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|geomean" $OUT/slice26.log | tail -12 | cut -c1-250
cp /tmp/slice26.json $OUT/ 2>/dev/null
