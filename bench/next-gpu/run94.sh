#!/usr/bin/env bash
# Session 52, after run93 (~3 min; what the budget leaves): the launch
# bound of thread-held rows of 32-96 floats (two blocks an SM) end to end.
# Seed 20261307 task 2 (conv1d -> ... -> v / v.norm(dim=0) ...; run93
# 0.224 ms, compile 0.176, its region 0.150): predicted region ~0.09 ms,
# the task ~0.165 ms (~1.07x compile).
set -uo pipefail
source bench/next-gpu/prepare.sh
select_tasks 20261307:2
timeout 100 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV "${dirs[@]}" \
  --json $OUT/sel94.json --runs 20 --fast-math --task-timeout 90 --work /tmp/kbw94 > $OUT/sel94.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "ok |WRONG|FAIL" $OUT/sel94.log | cut -c1-300
grep -h "^| kb_" /tmp/kbw94/*/*/rewritten/report.md 2>/dev/null | cut -c1-250
