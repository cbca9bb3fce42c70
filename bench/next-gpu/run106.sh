#!/usr/bin/env bash
# Session 55: where a split batch norm's time goes. run105's knobs: the
# fused BatchNorm1d -> hardswish over levit's shapes took 0.047-0.066 ms at
# 12544 tokens under 24 to 98 chunks (ATen's two ops 0.029-0.053) and 0.028
# ms over 1.5 MB, a floor that bandwidth does not explain. torch.profiler's
# kernel times (no L2 flush, no host launch in the figure) of the generated
# kernels (unverified, kept) against ATen's and inductor's.
set -uo pipefail
source bench/next-gpu/prepare.sh
KB_PROFILE_ROWS=24 timeout 300 bash scripts/gpu-profile-task bench/next-gpu/graphs/bn105/levit_bn.py > $OUT/prof106.log 2>&1
echo "prof rc $? $(( $(date +%s)-t0 ))s"
grep -v "^-\|^$" $OUT/prof106.log | cut -c1-170 | tail -70
# A fresh seed and a model measured once before (cspdarknet53), in what
# is left.
timed_slice slice106 20261318 2 30 ${DEADLINE:-400}
(cd $OUT && tar czf logs106.tgz *.log)
