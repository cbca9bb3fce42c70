#!/usr/bin/env bash
# Session 26's last command: the tasks its later changes touch, end to end
# (predictions in bench/NOTES.md, "Session 26"): gen-20261211 task 1 (the
# mean recomputes its pointwise chain), gen-20261206 task 4 and
# gen-20261208 task 7 (the same rule), gen-20261209 task 5 (moments batch
# 16), gen-20261206 task 2 (warp softmax 2 rows a lane group),
# gen-20261207 task 13 (the clamp of the convolution sinks into the next
# region), and GPT-2.
set -uo pipefail
source bench/next-gpu/prepare.sh
select_tasks 20261211:1 20261206:4 20261208:7 20261209:5 20261206:2 20261207:13
mkdir -p /tmp/rt/models && cp bench/models/11_gpt2_decoder.py /tmp/rt/models/
timeout $(( 590 - ($(date +%s)-t0) )) python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s $(( 540 - ($(date +%s)-t0) )) \
  "${dirs[@]}" --dir /tmp/rt/models --prepare 8 --json $OUT/sel2.json --runs 30 --fast-math --task-timeout 110 --work /tmp/kbw7 > $OUT/sel2.log 2>&1
echo "sel2 rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|vs comp|True|False|correct" $OUT/sel2.log | cut -c1-200
