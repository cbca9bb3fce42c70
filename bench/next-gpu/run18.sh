#!/usr/bin/env bash
# Session 29's first command: the LLaMA decoder's rewritten forward with
# 0-d factories made on the CPU, each call captured alone (predicted 0
# failures; was 2 of 254), then the issue-21 slice of a fresh seed
# (20261215, 8 generated tasks) with the LLaMA decoder end to end.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 60 tools/kb-export/kb-export bench/models/12_llama_decoder.py -o /tmp/l --device cuda --python "$(command -v python3)" > $OUT/llama_export.log 2>&1
$KB_REWRITE rewrite /tmp/l/12_llama_decoder.graph.txt -o /tmp/l/rw --verify off --quiet --source bench/models/12_llama_decoder.py
timeout 90 python3 bench/probes/capture_ops.py /tmp/l/rw bench/models/12_llama_decoder.py > $OUT/capture_ops.log 2>&1
echo "capture_ops rc $? $(( $(date +%s)-t0 ))s"; tail -8 $OUT/capture_ops.log | cut -c1-250
timeout 420 bash scripts/gpu-bench-slice --seed 20261215 --gen 8 --models 12 --json $OUT/slice.json \
  --runs 30 --fast-math --budget-s 390 --task-timeout 110 > $OUT/slice.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|True|False|geomean|ratio" $OUT/slice.log | cut -c1-250 | tail -30
