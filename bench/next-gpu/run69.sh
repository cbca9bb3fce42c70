#!/usr/bin/env bash
# Session 42: (1) verify_all over every torch-1.13 fixture: session 41's
# AtenReduce kernels with the shuffle-down offsets decreasing (each must be
# eager's bits, verify_all fails any that differs) and the parameter chains
# taken into new groups (swin_t, aten_sum_rows); (2) the --fast-math softmax
# exp and division, kb-verify's verdict and time per variant
# (bench/probes/fast_exp.py) on seed 20261235 task 2's softmax (rejected in
# run68) and the short-row softmaxes; (3) seed 20261234 task 7 (predicted
# correct, ~0.35 ms) and seed 20261235 task 2 end to end; (4) issue 22's
# table, bench/reductions.py kernels only (last run session 22), in the time
# left.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 220 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV test/fixtures/graphs/torch-1.13 > $OUT/verify69.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify69.log | grep -v "^Exception\|^frame" | tail -8 | cut -c1-250
grep -c "differ from eager" $OUT/verify69.log
g=bench/next-gpu/graphs
timeout 150 python3 bench/probes/fast_exp.py $KB_REWRITE $KBV $g/fm69/*.graph.txt $g/short36/sm14.graph.txt \
  $g/short36/smmul5.graph.txt --json $OUT/fastexp69.json > $OUT/fastexp69.log 2>&1
echo "fast_exp rc $? $(( $(date +%s)-t0 ))s"; cut -c1-260 $OUT/fastexp69.log
select_tasks 20261234:7 20261235:2
timeout 150 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --levels 3 --tasks 7 \
  "${dirs[@]}" --json $OUT/sel69.json --runs 20 --fast-math --task-timeout 100 --work /tmp/kbw69 > $OUT/sel69.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "ok |WRONG|FAIL" $OUT/sel69.log | cut -c1-250
left=$(( 580 - ($(date +%s)-t0) ))
timeout $left bash scripts/gpu-reductions --json $OUT/red69.json --kernels-only > $OUT/red69.log 2>&1
echo "reductions rc $? $(( $(date +%s)-t0 ))s"; tail -40 $OUT/red69.log | cut -c1-200
