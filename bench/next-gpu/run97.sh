#!/usr/bin/env bash
# Session 53 (~8 min): split rows fewer than a warp's lanes, a fresh seed
# and a model never measured.
# (1) split_few_rows fixture: all three kernels accepted. Seed 20261309
# task 3 (softmax over dim 0 of [16831007, 7]; run96 1.567 ms, compile
# 0.893): predicted ~0.6 ms (three passes of 471 MB at ~2.5 TB/s).
# (2) Fresh seed 20261310 (5 tasks) + model 35 gpt_neox (never measured).
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p /tmp/fx97 && cp test/fixtures/graphs/torch-1.13/split_few_rows.* /tmp/fx97/
timeout 60 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx97 > $OUT/verify97.log 2>&1
echo "verify_all rc $?"; tail -4 $OUT/verify97.log | cut -c1-200
timed_tasks sel97 100 90 20261309:3
timed_slice slice97 20261310 5 35 ${DEADLINE:-500}
(cd $OUT && tar czf logs97.tgz *.log)
