#!/usr/bin/env bash
# Session 31, first measurement of cross-row kernels (a training batch
# norm's statistics, a grid barrier, then a layer norm or softmax over
# other rows evaluating the batch norm per element): (1) the fixture's
# kernels through kb-verify and ModelNew end to end (with strided_views,
# written in session 30, not run yet); (2) gen-20261215 task 7's region
# (BN over 4097 channels -> tanh -> LN; before: 0.530 + 0.222 ms in two
# kernels, predicted ~0.45 as one) against its ATen ops; (3) the task end
# to end against eager and torch.compile (before: 0.749 ms, compile 0.671);
# (4) run25's pointwise vectors.
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p /tmp/xrf && cp test/fixtures/graphs/torch-1.13/cross_row_norms.* test/fixtures/graphs/torch-1.13/strided_views.* /tmp/xrf/
timeout 100 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/xrf > $OUT/verify_xr.log 2>&1
echo "verify rc $? $(( $(date +%s)-t0 ))s"; tail -8 $OUT/verify_xr.log | cut -c1-250
for c in cross_row_norms strided_views; do
  timeout 100 python3 test/Rewrite/gpu_model_new.py $KB_REWRITE $KBV test/fixtures $c > $OUT/mn_$c.log 2>&1
  echo "model_new $c rc $? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/mn_$c.log | cut -c1-250
done
timeout 100 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "a:;b:" --plan "" --json $OUT/knobs_xr.json bench/next-gpu/graphs/s31/*.graph.txt > $OUT/knobs_xr.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; tail -8 $OUT/knobs_xr.log | cut -c1-220
select_tasks 20261215:7
timeout 150 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 140 \
  "${dirs[@]}" --prepare 8 --json $OUT/sel_xr.json --runs 30 --fast-math --task-timeout 130 --work /tmp/kbw26 > $OUT/sel_xr.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|True|False" $OUT/sel_xr.log | cut -c1-250
G=bench/next-gpu/graphs/s30pw
timeout 150 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "v1:;v2:--pointwise-vectors 2;v4:--pointwise-vectors 4;v1b:" --plan "One pass" \
  --json $OUT/knobs_pointwise.json $G/*.graph.txt > $OUT/knobs_pointwise.log 2>&1
echo "knobs_pw rc $? $(( $(date +%s)-t0 ))s"; tail -14 $OUT/knobs_pointwise.log | cut -c1-200
