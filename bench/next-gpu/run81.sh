#!/usr/bin/env bash
# Session 46: C++ chains through a reduction, softmax or pooling (issue 27;
# lib/CodeGen/CxxStages.cpp), never run on a GPU yet. (1) kb-verify --cxx
# over examples/libtorch-block, now 9 chains (conv_pool: relu -> max_pool2d,
# classifier: gelu -> mul -> softmax): all verified, the broken copies all
# rejected; (2) the same for test/Rewrite/cxx-rewrite-stages.cpp's 7
# functions (mean, log_softmax with a broadcast bias, avg_pool2d, adaptive
# pooling to 1x1, amax) through its harness; (3) bench/cxx_rewrite.py: the
# example's functions against their original sources.
# Predictions: all verified (max_pool2d, avg_pool2d, amax bit-identical to
# ATen: same window order and NaN rule; sums, means and softmax within a
# few ulps); conv_pool ~1.3x its original's relu + pool (one write of the
# full-size activation and one read saved: 3 passes over it become 1),
# classifier ~1.5x (gelu, mul, softmax: 4 passes over the logits become 2).
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV
KB_REWRITE=$KB_REWRITE KB_VERIFY=$KBV timeout 280 bash scripts/gpu-cxx-verify > $OUT/cxx_verify81.log 2>&1
echo "gpu-cxx-verify rc $? $(( $(date +%s)-t0 ))s"; grep -E "verified|rejected|passed|gpu-cxx" $OUT/cxx_verify81.log | cut -c1-260 | tail -24
flags="$(python3 -c 'from torch.utils.cpp_extension import include_paths as p; print(" ".join("-I" + d for d in p()))')"
timeout 150 $KB_REWRITE rewrite test/Rewrite/cxx-rewrite-stages.cpp -o /tmp/st81 --verify on \
  --kb-verify $KBV --verify-harness -- -std=c++17 $flags > $OUT/stages81.log 2>&1
echo "stages rc $? $(( $(date +%s)-t0 ))s"; grep -E "rewritten|left|error" $OUT/stages81.log | cut -c1-260
timeout $(( 585 - ($(date +%s)-t0) )) bash scripts/gpu-cxx-rewrite > $OUT/cxx_rewrite81.log 2>&1
echo "gpu-cxx-rewrite rc $? $(( $(date +%s)-t0 ))s"; grep -vi warn $OUT/cxx_rewrite81.log | tail -14 | cut -c1-260
