#!/usr/bin/env bash
# Written in session 36, not run: (1) kb-verify over rows_staged in its final
# form (softmax-only staging, scalar loads); (2) --fast-math softmax
# (kb::softmax_exp / kb::softmax_div) against exact and the lane form,
# kb-verify's verdict on each (predicted softmax over rows of 14 0.228 ->
# ~0.19 ms); (3) seed 20261228 task 6 end to end with --fast-math
# (predicted 0.229 -> ~0.19; compile 0.170); (4) a fresh seed, 20261230,
# with EfficientNet-B0 and DenseNet-121 (not run since session 16).
set -uo pipefail
source bench/next-gpu/prepare.sh
rm -rf /tmp/vf && mkdir -p /tmp/vf && cp test/fixtures/graphs/torch-1.13/rows_staged.* /tmp/vf/
timeout 100 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/vf > $OUT/vf47.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; tail -5 $OUT/vf47.log | cut -c1-200
g=bench/next-gpu/graphs/short36
timeout 120 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;fm:--fast-math;lanes:--lane-short-rows" --plan "" \
  --json $OUT/knobs47.json $g/sm14.graph.txt $g/smmul5.graph.txt $g/lsm7.graph.txt > $OUT/knobs47.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected" $OUT/knobs47.log | cut -c1-200; grep -A5 "^graph region" $OUT/knobs47.log | cut -c1-200
select_tasks 20261228:6
timeout 100 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 90 \
  "${dirs[@]}" --prepare 8 --json $OUT/sel47.json --runs 30 --fast-math --task-timeout 90 --work /tmp/kbw47 > $OUT/sel47.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False" $OUT/sel47.log | cut -c1-250
left=$(( 570 - ($(date +%s)-t0) ))
timeout $left bash scripts/gpu-bench-slice --seed 20261230 --gen 6 --models 3,4 \
  --json /tmp/slice30.json --runs 30 --fast-math \
  --budget-s $(( left - 15 )) --task-timeout 150 > $OUT/slice30.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|geomean" $OUT/slice30.log | tail -12 | cut -c1-250
cp /tmp/slice30.json $OUT/ 2>/dev/null
# A second command: KB_REWRITE=... KB_VERIFY=... timeout 300 bash scripts/gpu-cxx-verify
