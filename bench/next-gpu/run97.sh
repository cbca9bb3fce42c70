#!/usr/bin/env bash
# Session 53 (~8 min): split rows fewer than a warp's lanes, a fresh seed
# and a model never measured.
# (1) split_few_rows fixture: all three kernels accepted. Seed 20261309
# task 3 (softmax over dim 0 of [16831007, 7]; run96 1.567 ms, compile
# 0.893): predicted ~0.6 ms (three passes of 471 MB at ~2.5 TB/s).
# (2) Fresh seed 20261310 (5 tasks) + model 35 gpt_neox (never measured).
set -uo pipefail
source bench/next-gpu/prepare.sh
verify_fixtures verify97 60 4 test/fixtures/graphs/torch-1.13/split_few_rows.*
timed_tasks sel97 100 90 20261309:3
timed_slice slice97 20261310 5 35 ${DEADLINE:-500}
(cd $OUT && tar czf logs97.tgz *.log)
