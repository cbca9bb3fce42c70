#!/usr/bin/env bash
# Session 63's first call. Predictions:
# (1) kb-stream-layouts and the transposed GEMM operand: mixer_b16 (26)
#     loses its 12 direct_copy kernels before the token MLP (0.46 ms in
#     run124) and the 12 strided bias adds after it (0.33 ms: linear takes
#     ATen's matmul + add_ path for a non-contiguous 3-d input); its
#     LayerNorm regions write the residual stream row-major. Predicted
#     ~21.2 ms (run122: 22.05, compile 21.02), ~0.99x compile.
# (2) kb-verify accepts mixer_blocks' and mixer_token_residual's regions;
#     gpu_model_new mixer_blocks (every kernel launched) and its relaid
#     check (readers copy eager's layout when producers run ATen) pass.
# (3) Seed 20261330 task 2 (run125's, never ran): ~0.12 ms vs compile 0.130.
# (4) Fresh seed 20261331 (3 tasks) and mobilevit_s (28): no task below
#     compile's ratio of earlier sessions' like tasks.
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV
if fits 100; then
verify_fixtures vf126 90 12 test/fixtures/graphs/torch-1.13/mixer_blocks.* \
  test/fixtures/graphs/torch-1.13/mixer_token_residual.*
fi
if fits 110; then
timeout 110 python3 test/Rewrite/gpu_model_new.py $KB_REWRITE $KBV test/fixtures mixer_blocks > $OUT/gmn126.log 2>&1
echo "gpu_model_new rc $? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/gmn126.log | cut -c1-250
fi
timed_slice slice126a 20261330 0 26 360
if fits 100; then
timed_tasks tt126 100 90 20261330:2
fi
timed_slice slice126b 20261331 3 28 ${DEADLINE:-560}
(cd $OUT && tar czf logs126.tgz *.log && rm -f *.log)
