#!/usr/bin/env bash
# Session 61's first call. Predictions:
# (1) gpu_model_new.py on convt_batch_reductions_cl (new: reductions over
#     the batch dim read channels-last, now walked (h, w, c)), lenet and
#     conv_pool_mean (their channels-last pooling walks changed text only)
#     and rows_wide_lanes (its sum over rows of 64 back to 16 lanes): all
#     pass, forced channels-last included.
# (2) Seed 20261320 task 1 (conv_transpose2d -> sum(0) -> ...): run117's
#     channels-last variant took 4.31 ms against NCHW's 1.94 because its
#     sum read NHWC data 32 pixels apart (a warp's loads C floats apart).
#     Walked channel fastest, predicted: the channels-last layout chosen,
#     about 1.45 ms (the dgrad kernel without cuDNN's nhwcToNchw, 1.18 ms,
#     + the 0.24 ms sum), within 5% of torch.compile (run117's profile:
#     compile 1.49 ms a forward).
# (3) A fresh seed (20261326) and resmlp_12 until DEADLINE.
set -uo pipefail
source bench/next-gpu/prepare.sh
F=test/fixtures/graphs/torch-1.13
if fits 150; then
timeout 150 python3 test/Rewrite/gpu_model_new.py $KB_REWRITE $KBV $F \
  convt_batch_reductions_cl lenet conv_pool_mean rows_wide_lanes > $OUT/gmn118.log 2>&1
echo "gpu_model_new rc $? $(( $(date +%s)-t0 ))s"; tail -12 $OUT/gmn118.log | cut -c1-200
fi
if fits 90; then
python3 bench/gen_tasks.py --count 2 --seed 20261320 -o /tmp/s20 > /dev/null
KB_PROFILE_ROWS=12 timeout 90 bash scripts/gpu-profile-task /tmp/s20/1_*.py > $OUT/prof118-s20.log 2>&1
echo "prof s20 rc $? $(( $(date +%s)-t0 ))s"; grep -E "^==|layout|Self CUDA time total|kb_region|conv|sum|Kernel|reduce|nhwc|nchw" $OUT/prof118-s20.log | cut -c1-160 | head -40
fi
fits 150 && timed_tasks s20t1 150 140 20261320:1
timed_slice slice118 20261326 4 38 ${DEADLINE:-540}
forward_choices /tmp/slice118.json
(cd $OUT && tar czf logs118.tgz *.log && rm -f *.log)
