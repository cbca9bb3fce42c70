#!/usr/bin/env bash
# Session 66's second call: seed 20261365 tasks 133 and 67 end to end
# (the held layer norm's regions measured 0.158 ms against ATen's 2.232 and
# 0.573 in run133) and a fresh seed. Predicted: both tasks faster than
# torch.compile; the fresh seed's tasks correct, none below 0.98x eager.
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV
fits 150 && timed_tasks tasks134 150 70 20261365:133 20261365:67
left=$(( ${DEADLINE:-540} - ($(date +%s) - t0) ))
if (( left >= 90 )); then
  timeout $left bash scripts/gpu-bench-slice --seed 20261370 --gen 2 --json /tmp/slice134.json \
    --runs 20 --fast-math --budget-s $(( left - 15 )) --task-timeout 120 > $OUT/slice134.log 2>&1
  echo "slice rc $? $(( $(date +%s) - t0 ))s"; grep -E "^\[|geomean" $OUT/slice134.log | tail -8 | cut -c1-250
  cp /tmp/slice134.json $OUT/ 2>/dev/null
fi
(cd $OUT && tar czf logs134.tgz *.log 2>/dev/null && rm -f *.log)
