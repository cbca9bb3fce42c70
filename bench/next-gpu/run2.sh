#!/usr/bin/env bash
# The second command: continue the seed (same machine: /tmp/kbw prepared),
# (its JSON kept in /tmp by run1.sh; a fresh machine restarts the seed),
# then --numerics relaxed on seed 20261208's first 14 tasks (reported apart).
set -uo pipefail
export PATH=/opt/torch/.venv/bin:$PATH
t0=$(date +%s)
[[ -x /tmp/kb-rewrite-0.1.0/bin/kb-rewrite ]] || tar xzf dist/kb-rewrite-0.1.0-linux-x86_64.tar.gz -C /tmp
export KB_REWRITE=/tmp/kb-rewrite-0.1.0/bin/kb-rewrite
from=(); [[ -f /tmp/slice-s25.json ]] && from=(--from /tmp/slice-s25.json)
[[ -x /tmp/kb-verify-build/bin/kb-verify ]] || echo "fresh machine: kb-verify is rebuilt by the slice script"
timeout 300 bash scripts/gpu-bench-slice --seed 20261209 --gen 8 --models 7 --json $OUT/slice.json "${from[@]}" \
  --runs 30 --fast-math --budget-s 280 --task-timeout 120 --work /tmp/kbw > $OUT/slice.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^gen|^models|^coverage" $OUT/slice.log
timeout $(( 585 - ($(date +%s)-t0) )) bash scripts/gpu-bench-slice --seed 20261208 --gen 14 --json $OUT/relaxed.json \
  --runs 30 --fast-math --numerics relaxed --budget-s $(( 560 - ($(date +%s)-t0) )) --task-timeout 120 --work /tmp/kbw-relaxed > $OUT/relaxed.log 2>&1
echo "relaxed rc $? $(( $(date +%s)-t0 ))s"; grep -E "^gen|^coverage" $OUT/relaxed.log
