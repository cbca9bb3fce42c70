#!/usr/bin/env bash
# Session 63's third call. Predictions:
# (1) resmlp_12 (38): unchanged by kb-stream-layouts (its Affine norms are
#     pointwise: no row kernel reads the stream) and by the transposed
#     operand rule (its norm1 output is already transposed): ~5.95 ms
#     against compile's ~6.05 (run122/124 on the H100).
# (2) Fresh seed 20261332 (2 tasks): correct, no task below 0.98x eager.
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV
timed_slice slice128 20261332 2 38 ${DEADLINE:-260}
(cd $OUT && tar czf logs128.tgz *.log && rm -f *.log)
