#!/usr/bin/env bash
# Session 44: the long-row sum in eager's order (each warp's shuffle tree,
# then the tree over the block's warps). verify_all over aten_sum_rows
# (rows of 16384 in a block, rows of 1024 in a warp): predicted every
# kernel that promises eager's bits bit-identical to eager.
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p /tmp/fx77 && cp test/fixtures/graphs/torch-1.13/aten_sum_rows.* test/fixtures/graphs/torch-1.13/level2_8_*.* /tmp/fx77/
timeout 120 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx77 > $OUT/verify77.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; cut -c1-260 $OUT/verify77.log | tail -10
