#!/usr/bin/env bash
# Session 57 (~8.5 min). run112's per-block timeline of levit's first
# batch norm (128 x 12544, 49 items): the statistics pass 2.5-3.1 us, the
# first grid barrier ~1.5 us, then the one finalizing block 7 us (its
# lanes read the row-major partials 49 doubles apart), the second barrier
# ~1.5 us, the element pass 5-8.5 us on 49 of 132 SMs. Now: partials
# chunk-major, read as double2s by quad lanes; row vectors and staged
# transposed stores are defaults; the workspace is zeroed once and kept
# (kb-verify poisons all but the barrier's 16 bytes before each launch,
# outside the timed region; no memset in front of each launch: 2.0 of the
# 24 us). (1) kb-verify on every fixture whose
# kernels changed (the partials' indexing). (2) levit's batch norms at the
# new default, against --split-row-scalars, and at 66/98/132 chunks:
# run111's "49 beat 98" was measured with the slow finalize, whose cost
# grew with the chunks. Predicted: region 0 0.0292 -> ~0.022 ms (the
# finalize 7 -> ~1.5 us, no memset), below ATen's 0.028, and 98 chunks now at least
# as fast as 49. (3) The timeline again. (4) levit_128 and mixer_b16 end to
# end (mixer's 23 `add -> layer_norm` regions now staged: predicted
# ~0.063 each against ATen's 0.087, so kept; the model 22.6 -> ~22.0 ms)
# and a fresh seed.
set -uo pipefail
source bench/next-gpu/prepare.sh
F=test/fixtures/graphs/torch-1.13
verify_fixtures verify113 150 8 $F/argmax.* $F/linear_norm_views.* $F/split_bn1d_long_rows.* \
  $F/split_bn1d_prologue.* $F/split_bn1d_strided.* $F/split_few_rows.* $F/split_softmax_strided.* \
  $F/split_sum_dim0.* $F/split_var_middle.* $F/sweep_prod.* $F/mixer_residual_transposed.*
timeout 200 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;sc:--split-row-scalars;c66:--split-chunks 66;c98:--split-chunks 98;c132:--split-chunks 132" \
  --plan "" --json $OUT/knobs113-bn.json bench/next-gpu/graphs/bn105/levit_bn.graph.txt > $OUT/knobs113-bn.log 2>&1
echo "knobs bn rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch" $OUT/knobs113-bn.log | cut -c1-200; grep -A8 "^graph region" $OUT/knobs113-bn.log | cut -c1-200
$KB_REWRITE codegen bench/next-gpu/graphs/bn105/levit_bn.graph.txt -o /tmp/lb-n > /dev/null
$KB_REWRITE codegen --split-chunks 98 bench/next-gpu/graphs/bn105/levit_bn.graph.txt -o /tmp/lb-98 > /dev/null
timeout 60 python3 bench/probes/split_phases.py /tmp/lb-n/kb_region_{0,3}.job.json /tmp/lb-98/kb_region_0.job.json 2>&1 | grep -E "base|timeline" | tee $OUT/phases113.log
timed_slice slice113 20261322 2 26,29 ${DEADLINE:-540}
forward_choices /tmp/slice113.json
(cd $OUT && tar czf logs113.tgz *.log && rm -f *.log)
