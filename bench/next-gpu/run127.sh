#!/usr/bin/env bash
# Session 63's second call. Predictions:
# (1) Strided softmax rows in whole items with lanes over rows (a last dim
#     too odd for float4s: seed 20261331 task 2's softmax over dim 2 of
#     [1, 128, 223, 255], 0.046 ms in run126 against a 2-pass floor of
#     ~0.022): each thread's 14-24 elements held in registers from the
#     online pass to the outputs (--split-item-registers) instead of read
#     again: ~0.03 ms (one read instead of two).
# (2) mixer_b16's kernel mix after kb-stream-layouts (20.655 ms against
#     compile's 21.005 in run126): no direct_copy kernels and no strided
#     ATen adds left; the LayerNorm regions ~0.05 ms each.
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV
G=bench/next-gpu/graphs/tt127
if fits 120; then
timeout 120 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;reg:--split-item-registers;d2:" --plan "" --json $OUT/knobs127.json \
  $G/s31t2.graph.txt $G/sm1.graph.txt $G/lsm2.graph.txt > $OUT/knobs127.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch" $OUT/knobs127.log | cut -c1-200
grep -A5 "^graph region" $OUT/knobs127.log | cut -c1-200
fi
if fits 230; then
timeout 230 python3 bench/probes/kernel_mix.py --model 26 --iters 10 --top 30 \
  --json $OUT/mix127-mixer.json > $OUT/mix127-mixer.log 2>&1
echo "mix mixer rc $? $(( $(date +%s)-t0 ))s"
python3 - $OUT/mix127-mixer.json <<'PY' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("eager", "compile", "optimize"):
    v = d.get(k, {})
    print(k, v.get("total_ms"), v.get("ms_by_class"), v.get("error", ""))
    for row in (v.get("top") or [])[:12]:
        print("   ", row.get("ms"), row.get("launches"), row.get("class"), str(row.get("name"))[:110])
PY
fi
(cd $OUT && tar czf logs127.tgz *.log && rm -f *.log)
