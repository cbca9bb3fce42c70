#!/usr/bin/env bash
# Written in session 36, not run (the second command after run47): lanes per
# row of float4 lane groups (`--vector-lanes`). Rows of 128 take 32 lanes of
# one float4 each today, so a layer norm's two double statistics cross five
# shuffle levels per 4 elements (seed 20261228 task 1: bmm -> layer norm
# over 128 -> floor_divide -> where, 0.549 ms vs compile 0.430). Predicted:
# 8 lanes (four float4s a lane) 15-30% faster on the layer norms over 128,
# less on softmax over 256 and the sum over 64, nothing on rows of 768.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 300 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;v4:--vector-lanes 4;v8:--vector-lanes 8;v16:--vector-lanes 16" --plan "" \
  --json $OUT/knobs48.json bench/next-gpu/graphs/lanes36/*.graph.txt > $OUT/knobs48.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected" $OUT/knobs48.log | cut -c1-200; grep -A8 "^graph region" $OUT/knobs48.log | cut -c1-200
