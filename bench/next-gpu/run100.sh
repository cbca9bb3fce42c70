#!/usr/bin/env bash
# For the next session (~4 min): large pooling windows reduced by a block.
# (1) block_pools fixture through kb-verify: 3 of 3 accepted (the average
# pool's sum differs from ATen's serial order in the last bits).
# (2) Seed 20261311 task 2 (run99 on an H200: 0.201 ms, its
# `adaptive_avg_pool2d(4) -> amin(0)` region 1.931 ms one thread a window,
# dropped against ATen's 0.120): predicted the region ~0.04 ms and kept,
# the task ~0.12 ms (compile 0.166 on the H200).
# (3) Which SDPA kernel eager runs in the transformer models, and why
# (bench/probes/sdpa_backend.py): predicted math for t5_encoder (its
# position-bias mask is a permuted view, last-dim stride != 1), efficient
# for the others.
# (4) A fresh seed (5 tasks) and model 16 swin_t.
set -uo pipefail
source bench/next-gpu/prepare.sh
verify_fixtures verify100 60 4 test/fixtures/graphs/torch-1.13/block_pools.*
timed_tasks sel100 150 140 20261311:2
timeout 150 python3 bench/probes/sdpa_backend.py bench/models/33_t5_encoder.py \
  bench/models/34_clip_text.py bench/models/10_bert_encoder.py bench/models/37_whisper_encoder.py \
  > $OUT/sdpa100.log 2>&1; echo "sdpa rc $?"; grep -E "^==|backend|refused" $OUT/sdpa100.log | cut -c1-300 | head -30
timed_slice slice100 20261312 5 16 ${DEADLINE:-540}
(cd $OUT && tar czf logs100.tgz *.log)
