#!/usr/bin/env bash
# Session 58's run115 (never ran: no GPU in sessions 58-59) with session
# 59's profile of seed 20261320 task 1, in one call: its probes, then the
# profile, then a slice of a fresh seed (two tasks) and resmlp_12 (never
# measured) until DEADLINE. run115's predictions:
# (1) kb-verify on the fixtures whose combine or lane kernels changed (the
#     barrier store changed every split kernel's text; the flat ones are
#     verified by (3)'s knobs).
# (2) Rows of 64 at four float4s a lane (default now) against 16 lanes
#     (`--vector-lanes 16`, the old default): predicted the logsumexp
#     ~1.05 against 1.17 ms, the softmax and layer norm 5-10% faster, the
#     sum, max and L1 norm within 2% either way (session 37: the sum gained
#     nothing).
# (3) Flat split reductions (default now, chunks cut to 8 float4s a
#     thread) against `--split-lane-rows`: predicted the amin ~0.73 ms
#     (ATen 0.76), the sum over [300007, 20] ~0.021 (lanes 0.023).
#     `--split-flat-outputs` (the flat form for per-element outputs, online
#     pairs and shifted moments) on split_few_rows' softmax over dim 0 of
#     [300007, 7] and batch norm of 5 channels: predicted 20-40% faster
#     than lanes (as the sums), kb-verify accepting both.
# (4) levit's batch norms: the defaults against the old barrier and
#     finalize (`--split-barrier-exchange --split-combine-once 16`):
#     predicted region 0 0.0207 -> ~0.018.
# (5) levit_128 (4.65 ms in run114, 14 regions dropped, most batch norms
#     within their margin: predicted ~4.5), resmlp_12 (never measured) and
#     two tasks of a fresh seed.
set -uo pipefail
source bench/next-gpu/prepare.sh
F=test/fixtures/graphs/torch-1.13
fx=()
for n in rows_wide_lanes sweep_prod split_bn1d_long_rows linear_norm_views split_softmax_strided; do
  fx+=($F/$n.graph.txt); [[ -f $F/$n.params.json ]] && fx+=($F/$n.params.json)
done
G=bench/next-gpu/graphs
if fits 70; then
timeout 70 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;vl16:--vector-lanes 16" --plan "" --json $OUT/knobs115-r64.json \
  $G/w115/sm64.graph.txt $G/w115/ln64.graph.txt $G/lanes36/sum64.graph.txt $G/gen20261215_6_max_rows64.graph.txt \
  $G/gen20261212_3_l1rows64.graph.txt $G/fr114/logsumexp_rows64.graph.txt > $OUT/knobs115-r64.log 2>&1
echo "knobs r64 rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch" $OUT/knobs115-r64.log | cut -c1-200; grep -A10 "^graph region" $OUT/knobs115-r64.log | cut -c1-200
fi
if fits 90; then
timeout 90 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;lanes:--split-lane-rows;lo:--split-lane-outputs" --plan "aten::(sum|amin|prod|batch_norm)|softmax" --json $OUT/knobs115-flat.json \
  $G/fr114/amin_dim0_7.graph.txt $F/split_few_rows.graph.txt $F/split_flat_rows.graph.txt $G/sum_dim0_7cols.graph.txt \
  $F/sweep_prod.graph.txt > $OUT/knobs115-flat.log 2>&1
echo "knobs flat rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch" $OUT/knobs115-flat.log | cut -c1-200; grep -A10 "^graph region" $OUT/knobs115-flat.log | cut -c1-200
fi
if fits 45; then
timeout 45 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;old:--split-barrier-exchange --split-combine-once 16" --plan "" --json $OUT/knobs115-bn.json \
  $G/bn105/levit_bn.graph.txt > $OUT/knobs115-bn.log 2>&1
echo "knobs bn rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch" $OUT/knobs115-bn.log | cut -c1-200; grep -A8 "^graph region" $OUT/knobs115-bn.log | cut -c1-200
fi
fits 60 && verify_fixtures verify115 60 14 "${fx[@]}"
# Seed 20261320 task 1 (conv_transpose2d -> sum(0) -> group_norm ->
# softmax(0) -> hardswish -> group_norm, 0.75x compile in run109: 1.948
# against 1.467 ms): which kernels differ. Predicted: the convolution
# itself (cuDNN's algorithm for the transposed conv), not the 680 MB sum.
if fits 90; then
python3 bench/gen_tasks.py --count 2 --seed 20261320 -o /tmp/s20 > /dev/null
KB_PROFILE_ROWS=12 timeout 90 bash scripts/gpu-profile-task /tmp/s20/1_*.py > $OUT/prof116-s20.log 2>&1
echo "prof s20 rc $? $(( $(date +%s)-t0 ))s"; grep -E "^==|Self CUDA time total|kb_region|conv|sum|Kernel|reduce" $OUT/prof116-s20.log | cut -c1-160 | head -40
fi
timed_slice slice117 20261324 2 38 ${DEADLINE:-540}
forward_choices /tmp/slice117.json
(cd $OUT && tar czf logs117.tgz *.log && rm -f *.log)
