#!/usr/bin/env bash
# Prepared in session 25 (its GPU time ran out): the tasks the session's changes touch, timed
# end to end (softmax in ATen's order before step ops, expensive prologues
# staged, 512 threads on rows no block keeps in L2, pow(|x|, 1.5) not
# singular, layer norms over long odd rows in ATen's order). Predictions
# in bench/NOTES.md ("Session 25").
set -uo pipefail
source bench/next-gpu/prepare.sh
if [[ -z ${SEL_ONLY:-} ]]; then
# Softmax in ATen's spatial order (one thread a row, and T threads a row
# meeting in its shared-memory tree), read from ATen's
# source in session 25 and not yet run: predicted 0 bits from eager.
K="timeout 90 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV"
$K --variants "base:;aten:--aten-order-norms" --plan softmax --json $OUT/probe-spatial.json \
  test/CodeGen/Inputs/softmax_spatial_step.graph.txt bench/next-gpu/graphs/softmax_channels_step.graph.txt > $OUT/probe-spatial.log 2>&1
echo "spatial rc $? $(( $(date +%s)-t0 ))s"; grep "bits differ" $OUT/probe-spatial.log; tail -5 $OUT/probe-spatial.log
# Layer norms over odd rows longer than 8192 in ATen's RowwiseMoments
# block (512 threads a row, BlockReduce's order): predicted 0 bits.
python3 bench/probes/ln_step_graphs.py -o /tmp/lno 9999x64 65535x92+ > /dev/null
$K --variants "base:;aten:--aten-order-norms" --plan layer_norm --json $OUT/probe-lnblock.json /tmp/lno/*.graph.txt > $OUT/probe-lnblock.log 2>&1
echo "lnblock rc $? $(( $(date +%s)-t0 ))s"; grep "bits differ" $OUT/probe-lnblock.log; tail -3 $OUT/probe-lnblock.log
fi
# One folder a seed (its manifest names the set gen-<seed>), holding only
# the selected task: kernelbench.py takes a task's id from its file name.
dirs=()
for st in 20261209:5 20261206:2 20261207:13 20261208:0 20261203:7; do
  s=${st%:*} t=${st#*:}
  python3 bench/gen_tasks.py --count $((t + 1)) --seed $s -o /tmp/rt/all$s > /dev/null
  mkdir -p /tmp/rt/$s && cp /tmp/rt/all$s/manifest.json /tmp/rt/all$s/${t}_*.py /tmp/rt/$s/
  dirs+=(--dir /tmp/rt/$s)
done
mkdir -p /tmp/rt/models && cp bench/models/1_resnet50.py bench/models/7_vit_b_16.py /tmp/rt/models/
timeout $(( 590 - ($(date +%s)-t0) )) python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s $(( 540 - ($(date +%s)-t0) )) \
  "${dirs[@]}" --dir /tmp/rt/models --prepare 7 --json $OUT/sel.json --runs 30 --fast-math --task-timeout 110 --work /tmp/kbw4 > $OUT/sel.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|vs comp|True|False|^sel|correct" $OUT/sel.log | cut -c1-200
