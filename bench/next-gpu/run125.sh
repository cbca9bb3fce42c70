#!/usr/bin/env bash
# Session 62's last call. Predictions:
# (1) Seed 20261330 task 2 (var over dim 0 of [4995, 16384] -> std ->
#     softmax over a dim of 1 -> gt): the var and std join regions now
#     (the softmax is exactly 1, so the comparison cannot flip); run124
#     had ours 0.169 ms (ATen's var) against compile 0.130: predicted
#     ~0.12 (a coalesced column reduction at ~2.8 TB/s).
# (2) Fresh seed 20261331 (the generator now draws addcmul / addcdiv) and
#     mobilevit_s (28: unfold/fold reshapes and transposes around its
#     transformer's linears, first measured with kb-gemm-operand-layouts):
#     no task below compile's ratio of earlier sessions' like tasks.
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV
if fits 100; then
timed_tasks tt125 100 90 20261330:2
fi
timed_slice slice125 20261331 4 28 ${DEADLINE:-480}
(cd $OUT && tar czf logs125.tgz *.log && rm -f *.log)
