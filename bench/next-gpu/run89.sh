#!/usr/bin/env bash
# Session 50 (~7 min; repack dist first). (1) Chains inside
# torch::nn::Sequential members (test/Rewrite/cxx-rewrite-sequential.cpp,
# never on a GPU): prediction 4 of 4 rewritten chains verified. (2) The CNN tutorial of
# prabhuomkar/pytorch-cpp (.carry/unseen/convnet.{cpp,h}, not in the
# repository; its two layers are Sequential bodies): 2 of 3 chains
# rewritten (the third a single log_softmax) and verified; built original
# and rewritten by bench/cxx_programs.py, kb_item running for real:
# outputs identical in eval and training mode; eval ~1.15x (BN + ReLU +
# 2x2 max pool after each conv at batch 100: the pool reads the BN output
# once instead of three passes), training ~1.0x (BN training statistics
# stay ATen's). (3) A fresh seed (20261292, 4 tasks) and a model never
# measured (33 t5_encoder) in what is left.
set -uo pipefail
source bench/next-gpu/prepare.sh
pids=()
rw seq89 test/Rewrite/cxx-rewrite-sequential.cpp /tmp/sq89 & pids+=($!)
rw convnet89 .carry/unseen/convnet.cpp /tmp/u89/convnet -I.carry/unseen & pids+=($!)
wait "${pids[@]}"
grep -hE "rewritten:|left as is" $OUT/seq89.log $OUT/convnet89.log | sort | uniq -c | cut -c1-200 | head -12
timeout 300 python3 bench/cxx_programs.py .carry/unseen /tmp/u89 --only convnet --runs 50 \
  --json $OUT/cxx_programs89.json > $OUT/cxx_programs89.log 2>&1
echo "cxx_programs rc $? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/cxx_programs89.log | cut -c1-200
timed_slice slice89 20261292 4 33 ${DEADLINE:-420}
(cd $OUT && tar czf logs89.tgz *.log && rm -f seq89.log convnet89.log)
