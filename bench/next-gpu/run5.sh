#!/usr/bin/env bash
# Session 26's fresh seed (issue 21): 8 generated tasks of seed 20261211,
# never generated before this run, and EfficientNet-B0 and GPT-2 in
# training mode; logs in one tarball (at most 8 files come back).
set -uo pipefail
export PATH=/opt/torch/.venv/bin:$PATH
t0=$(date +%s)
tar xzf dist/kb-rewrite-0.1.0-linux-x86_64.tar.gz -C /tmp
KB_REWRITE=/tmp/kb-rewrite-0.1.0/bin/kb-rewrite timeout 560 bash scripts/gpu-bench-slice \
  --seed 20261211 --gen 8 --models 3,11 --json $OUT/slice.json --runs 30 --fast-math \
  --budget-s 500 --task-timeout 110 --work /tmp/kbw > $OUT/slice.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"
grep -E "^\[|vs comp|True|False|correct" $OUT/slice.log | cut -c1-220
tar czf $OUT/work.tgz -C /tmp kbw 2>/dev/null
