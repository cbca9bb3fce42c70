#!/usr/bin/env bash
# Session 61's second call. Predictions:
# (1) gpu_model_new.py on convt_batch_reductions_cl (new), lenet and
#     conv_pool_mean (their channels-last walks' text changed) and
#     rows_wide_lanes: all pass (run118 passed it the wrong folder).
# (2) The C++ chains nested in other calls (cxx-rewrite-nested.cpp: an
#     operand of cumsum, dropout, an anchor, cat): the rewrite with
#     kb-verify --cxx and the harness: 6 of 7 chains rewritten, all
#     verified; cxx-rewrite-inplace-stages.cpp (in-place ops then a mean
#     or softmax on a private anchor result, computed out of place): 2 of
#     4 rewritten, both verified.
# (3) Strided logsumexp (seed 20261326 task 0: [35119, 128, 32] over dim
#     1, 0.245 ms against compile's 0.222 in run118): one thread a row
#     holding its 128 elements in registers (default) against the online
#     one-pass form (`--thread-row-max 64`: no registers). Predicted: the
#     online form 10% faster at 128 (occupancy: 128 registers a thread),
#     about even at 64 ([70000, 64, 16]); 100 and [8000, 128, 128] between.
# (4) resmlp_12's kernel mix (eval; 6.65 ms against compile's 6.04 in
#     run118, 13 regions dropped as no faster than ATen): where compile's
#     0.6 ms lead is. Predicted: its fused affine (alpha * x + beta) around
#     the linear layers and their residual adds, which our regions tie.
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV
if fits 120; then
timeout 120 python3 test/Rewrite/gpu_model_new.py $KB_REWRITE $KBV test/fixtures \
  convt_batch_reductions_cl lenet conv_pool_mean rows_wide_lanes > $OUT/gmn119.log 2>&1
echo "gpu_model_new rc $? $(( $(date +%s)-t0 ))s"; tail -6 $OUT/gmn119.log | cut -c1-200
fi
if fits 100; then
rw nested119 test/Rewrite/cxx-rewrite-nested.cpp /tmp/nested119 & p1=$!
rw inplace119 test/Rewrite/cxx-rewrite-inplace-stages.cpp /tmp/inplace119 & p2=$!
wait $p1 $p2
grep -hE "rewritten|left as is|chains" $OUT/nested119.log $OUT/inplace119.log | cut -c1-160
fi
G=bench/next-gpu/graphs/lse119
if fits 80; then
timeout 80 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;t64:--thread-row-max 64;t96:--thread-row-max 96" --plan "" --json $OUT/knobs119-lse.json \
  $G/lse_strided_a.graph.txt $G/lse_strided_b.graph.txt $G/lse_strided_c.graph.txt $G/lse_strided_d.graph.txt > $OUT/knobs119-lse.log 2>&1
echo "knobs lse rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch" $OUT/knobs119-lse.log | cut -c1-200; grep -A8 "^graph region" $OUT/knobs119-lse.log | cut -c1-200
fi
if fits 200; then
timeout 200 python3 bench/probes/kernel_mix.py --model 38 --iters 10 --top 30 \
  --json $OUT/mix119-resmlp.json > $OUT/mix119-resmlp.log 2>&1
echo "mix resmlp rc $? $(( $(date +%s)-t0 ))s"
python3 - $OUT/mix119-resmlp.json <<'PY' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("eager", "compile", "optimize"):
    v = d.get(k, {})
    print(k, v.get("total_ms"), v.get("ms_by_class"), v.get("error", ""))
    for row in (v.get("top") or [])[:12]:
        print("   ", str(row)[:150])
PY
fi
timed_slice slice119 20261327 3 33 ${DEADLINE:-540}
(cd $OUT && tar czf logs119.tgz *.log && rm -f *.log)
