#!/usr/bin/env bash
# Session 47, not yet run (~8 minutes). (1) C++ layer norm with ATen's NaN rows
# (run83 rejected all 3 on special values): prediction 3 of 4 rewritten and
# verified. (2) The autocast-ops graph (test/CodeGen/Inputs): both regions
# accepted. (3) BERT bf16 through optimize(): the 19 regions verified (run80:
# 33 not generated), ~1.9 ms (run80: 2.121 ms, H100).
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV PYTHONPATH=$PWD/python KB_CACHE_DIR=/tmp/kbcache84
flags="$(python3 -c 'from torch.utils.cpp_extension import include_paths as p; print(" ".join("-I" + d for d in p()))')"
timeout 200 $KB_REWRITE rewrite test/Rewrite/cxx-rewrite-layer-norm.cpp -o /tmp/ln84 --verify on \
  --kb-verify $KBV --verify-harness -- -std=c++17 $flags > $OUT/ln84.log 2>&1
echo "layer norm rc $? $(( $(date +%s)-t0 ))s"; grep -E "rewritten|left|error|verified|rejected" $OUT/ln84.log | cut -c1-300
# (1b) Stages computed by modules (cxx-rewrite-stage-modules.cpp): 4 of 5
# rewritten, all 4 verified (options read from the harness's own modules).
timeout 200 $KB_REWRITE rewrite test/Rewrite/cxx-rewrite-stage-modules.cpp -o /tmp/sm84 --verify on \
  --kb-verify $KBV --verify-harness -- -std=c++17 $flags > $OUT/sm84.log 2>&1
echo "stage modules rc $? $(( $(date +%s)-t0 ))s"; grep -E "rewritten|left|error|verified|rejected" $OUT/sm84.log | cut -c1-300
mkdir -p /tmp/fx84 && cp test/CodeGen/Inputs/bert_autocast_ops.graph.txt /tmp/fx84/
timeout 90 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx84 > $OUT/verify84.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; cut -c1-260 $OUT/verify84.log | tail -4
KB_RUNTIME_VERBOSE=1 timeout $(( 585 - ($(date +%s)-t0) )) python3 bench/python_api.py --models 10 --runs 30 --dtype bf16 \
  --json $OUT/python_api84_bf16.json > $OUT/python_api84_bf16.log 2>&1
echo "python_api bf16 rc $? $(( $(date +%s)-t0 ))s"; grep '^{' $OUT/python_api84_bf16.log | cut -c1-1200
grep -E "kb_runtime: (forward|CUDA graph)|not_generated|rejected" $OUT/python_api84_bf16.log | sort | uniq -c | head -8 | cut -c1-250
