#!/usr/bin/env bash
# For the next session (~8 min). run113: every levit batch norm beats ATen
# now (0.0212 ms against 0.0279 at 128 x 12544); its timeline: two grid
# barriers of ~1.4 us each from the last arrival to the first block out,
# the finalize 2.0 us, the element pass 4-6 us. (1) `--split-barrier-store`
# (the last arrival releases with one 8-byte store of count 0 and the next
# generation, instead of an exchange, a fence and an increment): predicted
# 0.5-1 us off each barrier, region 0 ~0.020 ms; and `--split-fold-unroll 4`
# (the finalize's chunk loop countable and unrolled): predicted the
# finalize 2.0 -> ~1.2 us; and `--split-combine-once 64` (below 64 chunks
# every item folds its rows' 49 partials itself, coalesced now: no
# finalize, one barrier): predicted 2-3 us off region 0 (the finalize and
# the second barrier, ~3.5 us, against ~1 us of folding in every item).
# kb-verify accepts every variant (codegen_knobs
# verifies each). (2) The timeline of both. (3) levit_128 end to end
# (run113 did not reach it: its batch norms now all beat ATen, so the 43
# regions dropped in run109 should mostly be kept: predicted 4.73 -> ~4.3
# ms), timm resmlp_12 (never measured) and a fresh seed. (4) `--split-flat`
# (at most 32 strided rows of one run read as flat float4s, 4 accumulators a
# thread; SplitFlat.cpp) on amin over dim 0 of [75353489, 7] (run112: 0.956
# ms, ATen 0.759) and the split_few_rows and sum_dim0_7cols sums, at the
# default chunks and at 264 and 1056: predicted at least ATen's 0.76 ms on
# the amin (one float4 a lane, 512 bytes a warp load, as the quad form),
# kb-verify accepting every variant. (5) The lane-group knobs on seed
# 20261322's logsumexp over rows of 64.
set -uo pipefail
source bench/next-gpu/prepare.sh
# The kept workspace's corpus entries (predicted: launch_error and
# wrong_result), and two good ones beside them.
timeout 60 python3 test/verify/corpus.py run $KBV --only bad_workspace_left_dirty,bad_replay_from_workspace,good_relu,good_row_sum > $OUT/corpus114.log 2>&1
echo "corpus rc $? $(( $(date +%s)-t0 ))s"; tail -6 $OUT/corpus114.log | cut -c1-200
timeout 220 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;bs:--split-barrier-store;fu:--split-fold-unroll 4;bsfu:--split-barrier-store --split-fold-unroll 4;co:--split-combine-once 64;cobs:--split-combine-once 64 --split-barrier-store --split-fold-unroll 4" \
  --plan "" --json $OUT/knobs114-bn.json bench/next-gpu/graphs/bn105/levit_bn.graph.txt > $OUT/knobs114-bn.log 2>&1
echo "knobs bn rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch" $OUT/knobs114-bn.log | cut -c1-200; grep -A8 "^graph region" $OUT/knobs114-bn.log | cut -c1-200
$KB_REWRITE codegen bench/next-gpu/graphs/bn105/levit_bn.graph.txt -o /tmp/lb-n > /dev/null
$KB_REWRITE codegen --split-barrier-store --split-fold-unroll 4 bench/next-gpu/graphs/bn105/levit_bn.graph.txt -o /tmp/lb-bf > /dev/null
$KB_REWRITE codegen --split-combine-once 64 --split-barrier-store bench/next-gpu/graphs/bn105/levit_bn.graph.txt -o /tmp/lb-co > /dev/null
timeout 80 python3 bench/probes/split_phases.py /tmp/lb-n/kb_region_0.job.json /tmp/lb-bf/kb_region_0.job.json /tmp/lb-co/kb_region_0.job.json 2>&1 | grep -E "base|bare|timeline" | tee $OUT/phases114.log
timeout 150 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;fl:--split-flat;fl264:--split-flat --split-chunks 264;fl1056:--split-flat --split-chunks 1056" \
  --plan "aten::(sum|amin)" --json $OUT/knobs114-flat.json bench/next-gpu/graphs/fr114/amin_dim0_7.graph.txt \
  test/fixtures/graphs/torch-1.13/split_few_rows.graph.txt test/fixtures/graphs/torch-1.13/split_flat_rows.graph.txt \
  bench/next-gpu/graphs/sum_dim0_7cols.graph.txt > $OUT/knobs114-flat.log 2>&1
echo "knobs flat rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch" $OUT/knobs114-flat.log | cut -c1-200; grep -A8 "^graph region" $OUT/knobs114-flat.log | cut -c1-200
# Seed 20261322's logsumexp over 12.2M rows of 64 (run113: 1.172 ms, compile
# 1.044): lanes per row and row groups per trip.
timeout 100 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;vl8:--vector-lanes 8;vl4:--vector-lanes 4;gu2:--group-unroll 2;gu8:--group-unroll 8" \
  --plan "" --json $OUT/knobs114-lse.json bench/next-gpu/graphs/fr114/logsumexp_rows64.graph.txt > $OUT/knobs114-lse.log 2>&1
echo "knobs lse rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch" $OUT/knobs114-lse.log | cut -c1-200; grep -A3 "^graph region" $OUT/knobs114-lse.log | cut -c1-200
timed_slice slice114 20261323 1 29,38 ${DEADLINE:-540}
forward_choices /tmp/slice114.json
(cd $OUT && tar czf logs114.tgz *.log && rm -f *.log)
