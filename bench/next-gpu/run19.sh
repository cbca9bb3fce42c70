#!/usr/bin/env bash
# Session 29's second command. (1) The LLaMA decoder: its traced graph and
# the rewritten forward's mask lines saved, the failed capture calls'
# operands (run18: still 2 of 254 __and__ calls fail with the 0-d CPU
# new_ones). (2) Probes through kb-verify (L2 flushed): AtenStrided's
# resident blocks per SM (1, 2, 4; default 2 for rows of 512: predicted
# region 0 0.297 -> ~0.18 ms) on gen-20261214 task 1; --group-unroll on
# gen-20261215 task 6 (max over rows of 64, 3.4 TB/s vs compile 4.06).
# (3) gen-20261215 task 1 (thread rows in registers: predicted 0.138 ->
# ~0.09 ms), gen-20261214 tasks 1 and 3 (padded avg_pool2d unrolled:
# predicted 0.131 -> ~0.11 ms) and public L2-6 (was 0.505); the pooling and
# softmax fixtures through kb-verify.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 60 tools/kb-export/kb-export bench/models/12_llama_decoder.py -o /tmp/l --device cuda --python "$(command -v python3)" > $OUT/llama_export.log 2>&1
cp /tmp/l/12_llama_decoder.graph.txt $OUT/
$KB_REWRITE rewrite /tmp/l/12_llama_decoder.graph.txt -o /tmp/l/rw --verify off --quiet --source bench/models/12_llama_decoder.py
grep -n "new_ones\|__and__\|_op[0-9]*_to(" /tmp/l/rw/model_new.py | grep -v "OpCall(" | head -20 > $OUT/llama_mask_lines.txt
timeout 90 python3 bench/probes/capture_ops.py /tmp/l/rw bench/models/12_llama_decoder.py > $OUT/capture_ops.log 2>&1
echo "capture_ops rc $? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/capture_ops.log | cut -c1-300
G=bench/next-gpu/graphs
timeout 120 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "base:--aten-order-norms;b1:--aten-order-norms --split-shape 0,1,0;b2:--aten-order-norms --split-shape 0,2,0;b4:--aten-order-norms --split-shape 0,4,0;b3:--aten-order-norms --split-shape 0,3,0" \
  --json $OUT/knobs_strided.json $G/gen20261214_1_softmax_mid_step.graph.txt > $OUT/knobs_strided.log 2>&1
echo "knobs1 rc $? $(( $(date +%s)-t0 ))s"; tail -6 $OUT/knobs_strided.log | cut -c1-250
timeout 90 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "base:;u2:--group-unroll 2;u4:--group-unroll 4;base2:" \
  --json $OUT/knobs_rows64.json $G/gen20261215_6_max_rows64.graph.txt $G/gen20261215_1_pool_ln10.graph.txt > $OUT/knobs_rows64.log 2>&1
echo "knobs2 rc $? $(( $(date +%s)-t0 ))s"; tail -8 $OUT/knobs_rows64.log | cut -c1-250
mkdir -p /tmp/fx && for f in sweep_avgpool3d_div sweep_avgpool2d_nopad pool_chain sweep_maxpool2d_ceil softmax_strided_step norm_step sweep_softmax_dim0 sweep_log_softmax_mid; do cp test/fixtures/graphs/torch-1.13/$f.graph.txt /tmp/fx/; done
cp test/fixtures/graphs/torch-2.11/level2_6_*.graph.txt test/fixtures/graphs/torch-2.11/level2_3_*.graph.txt /tmp/fx/
timeout 100 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx > $OUT/verify_fx.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify_fx.log | tail -5
select_tasks 20261215:1 20261214:1 20261214:3
timeout 150 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 140 \
  "${dirs[@]}" --levels 2 --tasks 6 --prepare 8 --json $OUT/sel.json --runs 30 --fast-math --task-timeout 80 --work /tmp/kbw19 > $OUT/sel.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False" $OUT/sel.log | cut -c1-250
