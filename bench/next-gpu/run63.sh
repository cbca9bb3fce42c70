#!/usr/bin/env bash
# Session 40: pooling after pooling no longer fused where the second's
# windows overlap (GoogLeNet's relu/cat -> max_pool -> max_pool regions ran
# 0.763 ms where ATen took 0.304 and were dropped for speed, run62). The
# changed kernels verified (GoogLeNet 0.14, Inception-v3 0.26, L3-7), then
# GoogLeNet and Inception-v3 timed against run62's 5.408 / 8.295 ms, L3-7
# against its last figure, and the fresh seed 20261234 in the time left.
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p /tmp/fx63
cp test/fixtures/graphs/torchvision-0.14/googlenet.* test/fixtures/graphs/torchvision-0.26/inception_v3.* \
  test/fixtures/graphs/torch-2.11/level3_7_GoogleNetInceptionV1.* /tmp/fx63/
timeout 120 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx63 > $OUT/verify63.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify63.log | grep -v "^Exception\|^frame" | tail -6 | cut -c1-250
timeout 100 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --levels 3 --tasks 7 \
  --json $OUT/l3-7.json --runs 20 --fast-math --task-timeout 90 > $OUT/l3-7.log 2>&1
echo "l3-7 rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[" $OUT/l3-7.log | cut -c1-250
timed_slice slice63m 20261234 0 17,18 330
timed_slice slice63 20261234 8 "" 585
