#!/usr/bin/env bash
# Session 30's first command (written in session 29, not run yet):
# (1) the LLaMA decoder's rewritten forward with call sites calling their
# resolved overloads, each call captured alone (predicted 0 failures; was 2
# of 254, both aten::__and__ through the packet); (2) the rest of seed
# 20261216 (tasks 4-7) with the LLaMA decoder end to end (predicted: the
# forward replays as a CUDA graph, well under eager's 7.6 ms) and GPT-2;
# (3) gen-20261214 task 1 with AtenStrided uncapped (predicted ~0.95 ms).
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 60 tools/kb-export/kb-export bench/models/12_llama_decoder.py -o /tmp/l --device cuda --python "$(command -v python3)" > $OUT/llama_export.log 2>&1
$KB_REWRITE rewrite /tmp/l/12_llama_decoder.graph.txt -o /tmp/l/rw --verify off --quiet --source bench/models/12_llama_decoder.py
timeout 90 python3 bench/probes/capture_ops.py /tmp/l/rw bench/models/12_llama_decoder.py > $OUT/capture_ops.log 2>&1
echo "capture_ops rc $? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/capture_ops.log | cut -c1-300
cp bench/results/2026-12-03-unseen-seed20261216-s29.json $OUT/slice.json
timeout 330 bash scripts/gpu-bench-slice --seed 20261216 --gen 8 --models 12,11 --json $OUT/slice.json \
  --runs 30 --fast-math --budget-s 315 --task-timeout 110 > $OUT/slice.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False|geomean" $OUT/slice.log | cut -c1-250 | tail -16
select_tasks 20261214:1
timeout 80 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 75 \
  "${dirs[@]}" --prepare 8 --json $OUT/sel.json --runs 30 --fast-math --task-timeout 70 --work /tmp/kbw21 > $OUT/sel.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False" $OUT/sel.log | cut -c1-250
