#!/usr/bin/env bash
# Session 61's third call. Predictions:
# (1) kb-verify on the new fixture logsumexp_strided_rows (rows of 100 in
#     registers, rows of 128 in one online pass) and
#     convt_batch_reductions_cl: all verified.
# (2) Seed 20261326 task 0 (logsumexp over dim 1 of [35119, 128, 32]) with
#     the online pass as the default: ~0.208 ms (run119's probe) against
#     compile's 0.222 (run118: ours 0.245).
# (3) Seed 20261327 task 1 (depthwise conv2d 5x5 -> masked_fill -> add ->
#     remainder -> softmax(3) -> rsub: ours 0.163 ms, compile 0.108 in
#     run119): which kernels differ. Predicted: compile runs the depthwise
#     convolution channels-last (or in Triton), our NCHW cuDNN kernel
#     takes most of the 0.055 ms gap.
set -uo pipefail
source bench/next-gpu/prepare.sh
F=test/fixtures/graphs/torch-1.13
fits 60 && verify_fixtures verify120 60 8 $F/logsumexp_strided_rows.graph.txt $F/logsumexp_strided_rows.params.json \
  $F/convt_batch_reductions_cl.graph.txt $F/convt_batch_reductions_cl.params.json
fits 100 && timed_tasks s26t0 100 90 20261326:0
if fits 90; then
python3 bench/gen_tasks.py --count 2 --seed 20261327 -o /tmp/s27 > /dev/null
KB_PROFILE_ROWS=10 timeout 90 bash scripts/gpu-profile-task /tmp/s27/1_*.py > $OUT/prof120-s27.log 2>&1
echo "prof s27 rc $? $(( $(date +%s)-t0 ))s"; grep -E "^==|layout|Self CUDA time total|kb_region|conv|Kernel|softmax|elementwise|triton" $OUT/prof120-s27.log | cut -c1-160 | head -40
fi
(cd $OUT && tar czf logs120.tgz *.log && rm -f *.log)
