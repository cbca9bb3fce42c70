#!/usr/bin/env bash
# Session 62's second call. Predictions:
# (1) resmlp-width regions ([32, 196, 384], bench/next-gpu/graphs/tt123):
#     the tiled kernels (rows over the leading dims now) against the float4
#     kernel (--no-tiled-transposes) and ATen: run122's per-batch tiles took
#     0.0204 ms (mul -> add -> addcmul) and 0.0230 (fc2's epilogue) in
#     resmlp_12; predicted ~0.019 / 0.021 now (no half-empty tiles), the
#     float4 kernel ~0.035 / 0.040 (a float per sector on one side).
# (2) gpu_model_new on mixer_transposed (registered now): passes, every
#     kernel launched.
# (3) Fresh seed 20261329 (3 tasks) and swin_t (16: its scaled q, read by
#     matmul, is written row-major now): no task slower than before; swin_t
#     ~ run109's ratio.
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV
G=bench/next-gpu/graphs/tt123
if fits 100; then
timeout 100 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;nt:--no-tiled-transposes" --plan "" --json $OUT/knobs123.json \
  $G/resmlp_wide.graph.txt > $OUT/knobs123.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch" $OUT/knobs123.log | cut -c1-200
grep -A12 "^graph region" $OUT/knobs123.log | cut -c1-200
fi
if fits 90; then
timeout 90 python3 test/Rewrite/gpu_model_new.py $KB_REWRITE $KBV test/fixtures mixer_transposed strided_views > $OUT/gmn123.log 2>&1
echo "gpu_model_new rc $? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/gmn123.log | cut -c1-200
fi
timed_slice slice123 20261329 3 16 ${DEADLINE:-560}
(cd $OUT && tar czf logs123.tgz *.log && rm -f *.log)
