#!/usr/bin/env bash
# Session 27's last command (300 s of GPU time left after refused starts):
# run11.sh's first part cut to its two fixes: gen-20261212 task 5 (the
# fused mean -> sub -> sub -> exp region kb-verify rejected; predicted
# 0.485 -> ~0.44 ms) and the LLaMA decoder (its capture failed on a
# host-to-device copy of a constant, now computed once).
set -uo pipefail
source bench/next-gpu/prepare.sh
select_tasks 20261212:5
mkdir -p /tmp/rt/models && cp bench/models/12_llama_decoder.py /tmp/rt/models/
timeout $(( 175 - ($(date +%s)-t0) )) python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s $(( 160 - ($(date +%s)-t0) )) \
  "${dirs[@]}" --dir /tmp/rt/models --prepare 8 --json $OUT/sel.json --runs 20 --fast-math --task-timeout 100 --work /tmp/kbw12 > $OUT/sel.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|vs comp|True|False|correct|FAILED" $OUT/sel.log | cut -c1-220
