#!/usr/bin/env bash
# Session 52, the last call (~9 min). What session 52 built after run92:
# (1) kb-form-regions copies a pointwise op whose users are in several
# regions into each (a convolution's bias add read by v.mean(0) and
# v - mean); adaptive pool windows unrolled to the widest window; an
# anchor's residual add moves into the RMS norm's row kernel (T5, LLaMA).
# verify_all on the fixtures these change: every kernel accepted.
# (2) Seed 20261306 task 1 (conv2d -> v - v.mean(0) -> adaptive_max_pool2d
# 7 -> log_softmax -> ...; run92 2.200 ms, compile 1.508, H100): the bias
# add's 0.337 ms pass gone, the pool region 0.484 -> ~0.30 ms: predicted
# ~1.70 ms (~0.89x compile). (3) Fresh seed 20261307 (4 tasks) and models
# 33 t5_encoder (its 11 RMS norms one kernel each instead of two:
# predicted ~2% faster than run89's 5.36 ms) and 36 segformer (never
# measured; predicted ~1.1x eager, ~0.9x compile).
set -uo pipefail
source bench/next-gpu/prepare.sh
verify_fixtures verify93 90 14 \
  test/fixtures/graphs/torch-1.13/{rms_residual_epilogue,sweep_adaptive_avg,adaptive_pool_windows,pools_into_rows}.* \
  test/CodeGen/Inputs/adaptive_max_pool.* test/CodeGen/Inputs/adaptive_pool_rows.*
timed_tasks sel93 120 110 20261306:1
timed_slice slice93 20261307 4 33,36 ${DEADLINE:-575}
(cd $OUT && tar czf logs93.tgz *.log)
