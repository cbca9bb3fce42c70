#!/usr/bin/env bash
# Session 32, last: (1) kernels whose strided rows one thread now holds in
# registers with two plain passes through kb-verify; (2) rows of 100 and
# 126 held (default, 128) or not (--thread-row-max 64/16) timed against
# ATen (before: logsumexp over 258048 strided rows of 126 in one online
# pass 0.055 ms); (3) torch.profiler on two grouped-convolution tasks where
# torch.compile wins (seed 20261222 task 7, 0.67x; seed 20261221 task 5,
# 0.80x): which kernels compile runs; (4) seed 20261221 task 3 end to end
# (softmax over 55 strided: 0.378 ms, predicted ~0.17).
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p /tmp/fx32 && cp test/fixtures/graphs/torch-1.13/{split_softmax_strided,softmax_strided_step}.* test/CodeGen/Inputs/logsumexp_strided.graph.txt /tmp/fx32/
timeout 60 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx32 > $OUT/verify_fx32.log 2>&1
echo "verify rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify_fx32.log | tail -4 | cut -c1-250; grep -c "^ok" $OUT/verify_fx32.log
mkdir -p /tmp/g32 && cp test/CodeGen/Inputs/logsumexp_strided.graph.txt bench/next-gpu/graphs/s32/{sm100,lse24}.* /tmp/g32/
timeout 90 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;t64:--thread-row-max 64;t16:--thread-row-max 16" --plan "" \
  --json $OUT/knobs_threadrow2.json /tmp/g32/*.graph.txt > $OUT/knobs_threadrow2.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/knobs_threadrow2.log | cut -c1-220
python3 bench/gen_tasks.py --count 8 --seed 20261222 -o /tmp/p22 > /dev/null; python3 bench/gen_tasks.py --count 8 --seed 20261221 -o /tmp/p21 > /dev/null
for t in /tmp/p22/7_*.py /tmp/p21/5_*.py; do
  timeout 60 bash scripts/gpu-profile-task $t > $OUT/prof_$(basename $t .py | cut -c1-20).log 2>&1
  echo "profile $(basename $t) rc $? $(( $(date +%s)-t0 ))s"
done
select_tasks 20261221:3
timeout 60 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 55 \
  "${dirs[@]}" --prepare 8 --json $OUT/sel32.json --runs 30 --fast-math --task-timeout 50 --work /tmp/kbw32 > $OUT/sel32.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|True|False" $OUT/sel32.log | cut -c1-250
