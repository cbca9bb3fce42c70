#!/usr/bin/env bash
# The second command (prepared in session 24): --numerics relaxed on seed
# 20261208's first 8 tasks (reported apart, never in the default figures),
# then kernel profiles of two conv tasks without a channels-last variant:
# the 17 such conv tasks of six seeds ran at 0.68x torch.compile (geomean),
# the 13 with one at 1.25x; conv1d worst (0.21-0.60x). Where does
# torch.compile's time go (its conv kernels, its layout)?
set -uo pipefail
export PATH=/opt/torch/.venv/bin:$PATH
t0=$(date +%s)
[[ -x /tmp/kb-rewrite-0.1.0/bin/kb-rewrite ]] || tar xzf dist/kb-rewrite-0.1.0-linux-x86_64.tar.gz -C /tmp
export KB_REWRITE=/tmp/kb-rewrite-0.1.0/bin/kb-rewrite
timeout 330 bash scripts/gpu-bench-slice --seed 20261208 --gen 8 --json $OUT/relaxed.json \
  --runs 30 --fast-math --numerics relaxed --budget-s 300 --task-timeout 120 --work /tmp/kbw-relaxed > $OUT/relaxed.log 2>&1
echo "relaxed rc $? $(( $(date +%s)-t0 ))s"; grep -E "^gen|^coverage" $OUT/relaxed.log
for t in task_conv1d_gn task_grouped_conv2d_softmax; do
  KB_PROFILE_ROWS=8 timeout 120 bash scripts/gpu-profile-task bench/next-gpu/graphs/$t.py > $OUT/profile-$t.log 2>&1
  echo "profile $t rc $? $(( $(date +%s)-t0 ))s"; grep -A12 "== compile" $OUT/profile-$t.log | head -14
done
