#!/usr/bin/env bash
# Session 29's first command: the LLaMA decoder's rewritten forward with
# 0-d factories made on the CPU, each call captured alone (predicted 0
# failures; was 2 of 254); the AtenStrided softmax kernels through
# kb-verify (eager's bits demanded) and gen-20261214 task 1 with them
# (predicted ~0.75 ms, was 1.097: two 0.40-0.43 ms softmax regions ->
# ~0.2 each); then the issue-21 slice of a fresh seed (20261215, 8
# generated tasks) with the LLaMA decoder end to end.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 60 tools/kb-export/kb-export bench/models/12_llama_decoder.py -o /tmp/l --device cuda --python "$(command -v python3)" > $OUT/llama_export.log 2>&1
$KB_REWRITE rewrite /tmp/l/12_llama_decoder.graph.txt -o /tmp/l/rw --verify off --quiet --source bench/models/12_llama_decoder.py
timeout 90 python3 bench/probes/capture_ops.py /tmp/l/rw bench/models/12_llama_decoder.py > $OUT/capture_ops.log 2>&1
echo "capture_ops rc $? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/capture_ops.log | cut -c1-250
mkdir -p /tmp/fx && cp test/fixtures/graphs/torch-1.13/softmax_strided_step.graph.txt /tmp/fx/
timeout 60 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx 2>&1 | tail -6
select_tasks 20261214:1
timeout 100 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 90 \
  "${dirs[@]}" --prepare 8 --json $OUT/sel.json --runs 30 --fast-math --task-timeout 80 --work /tmp/kbw18 > $OUT/sel.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|True|False" $OUT/sel.log | cut -c1-250
left=$(( 570 - ($(date +%s)-t0) ))
timeout $left bash scripts/gpu-bench-slice --seed 20261215 --gen 8 --models 12 --json $OUT/slice.json \
  --runs 30 --fast-math --budget-s $((left - 25)) --task-timeout 110 > $OUT/slice.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|True|False|geomean|ratio" $OUT/slice.log | cut -c1-250 | tail -30
