#!/usr/bin/env bash
# Session 29's last command: (1) which form of a bool `&` breaks CUDA graph
# capture (bench/probes/capture_and.py; LLaMA's two mask `__and__` calls);
# (2) a fresh seed, 20261216 (8 generated tasks); (3) gen-20261215 task 6
# with 4 row groups a warp trip (predicted 0.422 -> ~0.36 ms) and
# gen-20261214 task 1 with AtenStrided uncapped again (~0.95 ms);
# (4) models 7 (ViT-B/16) and 11 (GPT-2).
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 60 python3 bench/probes/capture_and.py > $OUT/capture_and.log 2>&1
echo "capture_and rc $? $(( $(date +%s)-t0 ))s"; cat $OUT/capture_and.log | cut -c1-200
timeout 230 bash scripts/gpu-bench-slice --seed 20261216 --gen 8 --json $OUT/slice.json \
  --runs 30 --fast-math --budget-s 215 --task-timeout 100 > $OUT/slice.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False|geomean" $OUT/slice.log | cut -c1-250 | tail -14
select_tasks 20261215:6 20261214:1
timeout 80 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 75 \
  "${dirs[@]}" --prepare 8 --json $OUT/sel.json --runs 30 --fast-math --task-timeout 60 --work /tmp/kbw20 > $OUT/sel.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False" $OUT/sel.log | cut -c1-250
left=$(( 470 - ($(date +%s)-t0) ))
timeout $left bash scripts/gpu-bench-slice --seed 20261216 --gen 0 --models 7,11 --json $OUT/models.json \
  --runs 30 --fast-math --budget-s $((left - 15)) --task-timeout 110 > $OUT/models.log 2>&1
echo "models rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False|geomean" $OUT/models.log | cut -c1-250 | tail -6
