#!/usr/bin/env bash
# For the next session (~6 min). (1) Transposed stores staged through a
# shared tile (--stage-transposed-stores, TransposedStores.cpp): mixer_b16
# keeps its residual stream in PatchEmbed's transposed layout, so its
# `add -> layer_norm` regions store the sum one float per sector (0.106 ms
# against ATen's 0.087, run109; the same region with a row-major sum took
# 0.037, run108). Predicted: staged 0.045-0.060 ms on the probe
# mixer_residual_t (its kb_region_0 is the model's kb_region_2), kb-verify
# accepting both. (2) levit's shorter batch norms (3136 and 1024 tokens)
# at fewer chunks than the 64 KB items give (run111 found 49 chunks of 256
# tokens beat 98 at 12544; 12 and 4 not measured), and the rows' shift
# and statistics as vectors (--split-row-vectors: ncu's excess sectors;
# predicted 5-10% on every region). (3) The workspace memset before each
# split launch (split_phases' memset variant) and each block's timeline.
# (4) mixer_b16, levit_128 and timm resmlp_12 (never measured: its
# cross-patch linears run on transposed tokens, as Mixer's) end to end,
# and a fresh seed.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 90 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;st:--stage-transposed-stores" --plan "" --json $OUT/knobs112-mrt.json \
  bench/next-gpu/graphs/tr109/mixer_residual_t.graph.txt > $OUT/knobs112-mrt.log 2>&1
echo "knobs mrt rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch" $OUT/knobs112-mrt.log | cut -c1-200; grep -A4 "^graph region" $OUT/knobs112-mrt.log | cut -c1-200
timeout 200 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;c12:--split-chunks 12;c6:--split-chunks 6;c4:--split-chunks 4;rv:--split-row-vectors;rva8:--split-row-vectors --split-ahead 8 --split-shape 0,1,0" \
  --plan "" --json $OUT/knobs112-bn.json bench/next-gpu/graphs/bn105/levit_bn.graph.txt > $OUT/knobs112-bn.log 2>&1
echo "knobs bn rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch" $OUT/knobs112-bn.log | cut -c1-200; grep -A8 "^graph region" $OUT/knobs112-bn.log | cut -c1-200
# The workspace memset in front of each split launch (kb-verify's timing
# and the runtime both): predicted 1.5-2.5 us of levit's ~30 us regions.
# And the timeline of each block (start, around each grid barrier, end):
# where the 128 x 12544 region's 31 us go.
$KB_REWRITE codegen bench/next-gpu/graphs/bn105/levit_bn.graph.txt -o /tmp/lb-d > /dev/null
timeout 60 python3 bench/probes/split_phases.py /tmp/lb-d/kb_region_{0,3,5}.job.json 2>&1 | tee $OUT/phases112.log
timed_slice slice112 20261321 2 26,29,38 ${DEADLINE:-540}
forward_choices /tmp/slice112.json
(cd $OUT && tar czf logs112.tgz *.log && rm -f *.log)
