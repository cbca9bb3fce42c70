#!/usr/bin/env bash
# Session 56, fourth call (~3 min): chunks of levit's batch norms again,
# now that an item's combines are batched. ncu (run110) on the 128 x 12544
# region: one block of 16 warps an SM (98 items), each warp issuing once
# every 23 cycles without the grid barriers (13 of them waiting on
# loads), 53 with them (31 at the block barrier); the element pass's
# float4 load waits for the previous float4's store. run105 found 192
# chunks slower than 24 with the serial combine (16 barriers an item).
# Predicted: with three barriers an item, 196 chunks (two blocks an SM,
# 8 warps a scheduler) beat 98 by 15-25% at 128 x 12544.
set -uo pipefail
source bench/next-gpu/prepare.sh
g=bench/next-gpu/graphs/bn105/levit_bn.graph.txt
timeout 150 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;c49:--split-chunks 49;c196:--split-chunks 196;c392:--split-chunks 392" \
  --plan "" --json $OUT/knobs111.json $g > $OUT/knobs111.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch" $OUT/knobs111.log | cut -c1-200; grep -A9 "^graph region" $OUT/knobs111.log | cut -c1-200
