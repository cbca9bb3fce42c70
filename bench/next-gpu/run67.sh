#!/usr/bin/env bash
# Session 41: (1) the kernels of the fixtures whose regions changed when
# form-regions began trying the operand groups with an anchor or reduction
# first (stochastic depth's div_/mul joining the residual regions:
# EfficientNet-B0 0.14, ConvNeXt-Tiny and Swin-T 0.26) verified;
# (2) seed 20261234's tasks 2 (same-row softmax, run65 0.338 ms), 6 (kl_div
# in one region now, run65 2.097 ms, compile 0.824) and 7 (wrong at 1e-4
# in run65: eager's float sum off the truth by more than the tolerance);
# (3) ConvNeXt-Tiny, Swin-T, EfficientNet-B0 and EfficientNetV2-S timed.
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p /tmp/fx67
cp test/fixtures/graphs/torchvision-0.14/efficientnet_b0.* test/fixtures/graphs/torchvision-0.26/convnext_tiny.* \
  test/fixtures/graphs/torchvision-0.26/swin_t.* /tmp/fx67/
timeout 200 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx67 > $OUT/verify67.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify67.log | grep -v "^Exception\|^frame" | tail -6 | cut -c1-250
select_tasks 20261234:2 20261234:6 20261234:7
timeout 150 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --levels 3 --tasks 7 \
  "${dirs[@]}" --json $OUT/sel67.json --runs 20 --fast-math --task-timeout 90 --work /tmp/kbw67 > $OUT/sel67.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False|ok |WRONG" $OUT/sel67.log | cut -c1-250
timed_slice slice67m 20261234 0 6,16,3,20 585
