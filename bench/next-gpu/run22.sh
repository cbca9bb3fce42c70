#!/usr/bin/env bash
# Session 30, first measurement of its own changes: (1) the strided-views
# fixture's kernels through kb-verify (strided inputs laid out as traced,
# outputs read back through their strides); (2) split row kernels whose
# later passes take the items in reverse order (the last items read are
# still in L2): --split-forward (the old order) against the default, over
# the 19 grid-barrier kernels of seed 20261217's 148 tasks and
# gen-20261216 task 6 (predicted: 2-6% faster on 0.3-1 GB inputs, nothing
# on inputs many times L2); (3) models: the LLaMA decoder end to end
# (capture fixed: predicted replay well under eager's 7.6 ms), ViT-B/16
# and ConvNeXt-T (their strided add -> layer_norm regions now generated;
# predicted ViT 16.0 -> ~15.7 ms).
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p /tmp/svf && cp test/fixtures/graphs/torch-1.13/strided_views.* /tmp/svf/
timeout 90 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/svf > $OUT/verify_strided.log 2>&1
echo "verify_strided rc $? $(( $(date +%s)-t0 ))s"; tail -6 $OUT/verify_strided.log | cut -c1-250
G=bench/next-gpu/graphs/s30
timeout 170 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "fwd:--split-forward;rev:" --plan "grid barrier" \
  --json $OUT/knobs_reverse.json $G/*.graph.txt > $OUT/knobs_reverse.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; tail -24 $OUT/knobs_reverse.log | cut -c1-200
left=$(( 575 - ($(date +%s)-t0) ))
timeout $left bash scripts/gpu-bench-slice --seed 20261218 --gen 0 --models 12,7,6 --json $OUT/models.json \
  --runs 30 --fast-math --budget-s $((left - 15)) --task-timeout 120 > $OUT/models.log 2>&1
echo "models rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False|geomean" $OUT/models.log | cut -c1-250 | tail -6
