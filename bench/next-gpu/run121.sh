#!/usr/bin/env bash
# Session 61's last call (short). Predictions:
# (1) The depthwise 5x5 convolution of seed 20261327 task 1 ([32, 64, 225,
#     16], groups 64) and a 3x3 control: cuDNN's channels-last kernel
#     about 2x faster than ATen's NCHW depthwise kernel (compile's profile:
#     0.053 against 0.121 ms), its results apart from NCHW's by more than
#     1e-5 (the runtime found them unequal) because it rounds to TF32
#     while ATen's own depthwise kernel computes in float32.
# (2) Two tasks of a fresh seed (20261328) until DEADLINE.
set -uo pipefail
source bench/next-gpu/prepare.sh
if fits 60; then
timeout 60 python3 bench/probes/conv_layout.py --runs 20 --json $OUT/conv121.json \
  --case conv2d:32,64,225,16:64:5:1:2:0:64 --case conv2d:32,64,112,112:64:3:1:1:0:64 > $OUT/conv121.log 2>&1
echo "conv_layout rc $? $(( $(date +%s)-t0 ))s"; tail -30 $OUT/conv121.log | cut -c1-220
fi
timed_slice slice121 20261328 2 13 ${DEADLINE:-200}
(cd $OUT && tar czf logs121.tgz *.log && rm -f *.log)
