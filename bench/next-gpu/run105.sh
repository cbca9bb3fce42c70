#!/usr/bin/env bash
# Session 55 (~9 min): kb-sink-views and the quad split's chunks.
# (1) Fixtures linear_norm_views (4 regions: batch_norm -> hardswish / add,
# the views sunk), split_bn1d_prologue (16 chunks where 4 were) and
# split_softmax_strided (31 where 7) through kb-verify: predicted all
# accepted (the statistics' order changes, the float64 bound holds).
# (2) BatchNorm1d -> hardswish in levit_128's shapes under chunk counts:
# the new heuristic (98/98/88 chunks at 12544 tokens, 24 at 3136, 8 at
# 1024) against fixed 2, 6, 24 (the old counts: 24 at 12544, 6 at 3136, 2
# at 1024) and 192. Predicted the new counts ~2x faster than the old at
# 12544 tokens (196 items of 64 KB where 48 of 268 KB left 84 SMs idle),
# each region below ATen's batch_norm + hardswish. Also softmax over dim 0
# of 4000 x 520 (split_softmax_strided: 31 chunks, 7 before, session 19's
# 0.263 ms): predicted no slower.
# (3) levit_128 (predicted 3.6-4.0 ms against run104's 4.93, compile
# 3.99), timm mixer_b16 (views around its token-mixing MLP), a fresh seed.
set -uo pipefail
source bench/next-gpu/prepare.sh
f=test/fixtures/graphs/torch-1.13
verify_fixtures verify105 100 8 $f/linear_norm_views.* $f/split_bn1d_prologue.* $f/split_softmax_strided.*
timeout 170 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "new:;c2:--split-chunks 2;c6:--split-chunks 6;c24:--split-chunks 24;c192:--split-chunks 192" \
  --plan "" --json $OUT/knobs105.json bench/next-gpu/graphs/bn105/levit_bn.graph.txt $f/split_softmax_strided.graph.txt > $OUT/knobs105.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch" $OUT/knobs105.log | cut -c1-200; grep -A9 "^graph region" $OUT/knobs105.log | cut -c1-200
timed_slice slice105 20261317 2 29,26 ${DEADLINE:-560}
forward_choices /tmp/slice105.json
(cd $OUT && tar czf logs105.tgz *.log)
