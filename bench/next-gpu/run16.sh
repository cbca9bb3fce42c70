#!/usr/bin/env bash
# Session 28's last command: which call of the LLaMA decoder's rewritten
# forward breaks CUDA graph capture (bench/probes/capture_ops.py), then
# gen-20261214 task 5 with its GEMM's bias kept (predicted: correct at
# 1e-4, ~1.05 ms) and task 12 of gen-20261206 (cross entropy) again.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 60 tools/kb-export/kb-export bench/models/12_llama_decoder.py -o /tmp/l --device cuda --python "$(command -v python3)" > $OUT/llama_export.log 2>&1
$KB_REWRITE rewrite /tmp/l/12_llama_decoder.graph.txt -o /tmp/l/rw --verify off --quiet --source bench/models/12_llama_decoder.py
timeout 90 python3 bench/probes/capture_ops.py /tmp/l/rw bench/models/12_llama_decoder.py > $OUT/capture_ops.log 2>&1
echo "capture_ops rc $? $(( $(date +%s)-t0 ))s"; tail -25 $OUT/capture_ops.log | cut -c1-250
select_tasks 20261214:5
timeout 120 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 110 \
  "${dirs[@]}" --prepare 8 --json $OUT/sel3.json --runs 30 --fast-math --task-timeout 100 --work /tmp/kbw17 > $OUT/sel3.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|True|False" $OUT/sel3.log | cut -c1-250
ls -la $OUT
