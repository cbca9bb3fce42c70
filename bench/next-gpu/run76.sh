#!/usr/bin/env bash
# Session 44: (1) ResNet-50 fp32 eval through the Python API again, after
# the runtime guard's per-argument checks were made once (the backend's
# graph passes all 320 parameters; run75: backend 4.18 ms vs optimize
# 3.34), in fp32 and bf16 autocast, with the runtime's layout and CUDA
# graph choices logged; (2) run72.sh (session 42's: cross entropy row outputs, seed
# 20261236 tasks 7/8, the sum-order probe, a fresh seed in the time left).
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV PYTHONPATH=$PWD/python KB_CACHE_DIR=/tmp/kbcache76
for dt in fp32 bf16; do
  KB_RUNTIME_VERBOSE=1 timeout 200 python3 bench/python_api.py --models 1 --runs 30 --dtype $dt \
    --json $OUT/python_api76_$dt.json > $OUT/python_api76_$dt.log 2>&1
  echo "python_api $dt rc $? $(( $(date +%s)-t0 ))s"; grep '^{' $OUT/python_api76_$dt.log | cut -c1-900
  grep -E "kb_runtime: (layout|CUDA graph|forward)" $OUT/python_api76_$dt.log | cut -c1-400 | head -8
done
mkdir -p /tmp/fx72 && cp test/fixtures/graphs/torch-1.13/cross_entropy*.* /tmp/fx72/
timeout 100 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx72 > $OUT/verify72.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; grep -v "^Exception\|^frame" $OUT/verify72.log | tail -6 | cut -c1-250
select_tasks 20261236:7 20261236:8
timeout 130 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV "${dirs[@]}" \
  --json $OUT/sel72.json --runs 20 --fast-math --task-timeout 90 --work /tmp/kbw72 > $OUT/sel72.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "ok |WRONG|FAIL" $OUT/sel72.log | cut -c1-300
timeout 60 python3 bench/probes/aten_sum_order.py --json $OUT/sumorder72.json > $OUT/sumorder72.log 2>&1
echo "sum order rc $? $(( $(date +%s)-t0 ))s"; cut -c1-300 $OUT/sumorder72.log | tail -12
timed_slice slice76 20261237 6 2,5 585
