#!/usr/bin/env bash
# For the next session (~5 min): why a split batch norm's passes are slow
# without their barriers. run107 (H100): levit's BatchNorm1d -> hardswish
# took 21-32 us with every grid barrier removed, for 1.5-6.4 MB (a copy of
# 6.4 MB is ~5 us). Hypothesis: each thread's float4 loads wait one after
# another (the quad plan's __launch_bounds__(512, 2) caps it at 64
# registers, too few to hold eight float4s ahead of their use; the PTX
# interleaves each load with its accumulation). Predicted: one block an SM
# (128 registers) or blocks of 256 take the no-barrier time well below 20
# us at 6.4 MB; if not, the block combines (8 per item, 16 barriers) are
# the cost. --split-ahead N (each trip's N float4s loaded before the first
# is used; with one block an SM, 122-128 registers and no spill) tests the
# same hypothesis in the kernel's text. Then the grid cut's kernels (min(sm_count * 2, items)) through
# kb-verify, predicted 15-20% below run105's figures.
set -uo pipefail
source bench/next-gpu/prepare.sh
# kb-sink-views' copying reshape: the hardswish reads the transposed
# attention product through its strides (predicted accepted).
verify_fixtures verify108 45 4 test/fixtures/graphs/torch-1.13/attention_proj_hardswish.*
# Transposed operands staged through shared memory (RowKernels.cpp):
# predicted accepted (the same values in the same order: the same bits).
verify_fixtures verify108t 60 4 test/fixtures/graphs/torch-1.13/mixer_token_residual.* test/fixtures/graphs/torch-1.13/strided_views.*
# ... and their time against the direct strided loads: mixer's add ->
# layer_norm at batch 32 (run105: 0.105 ms, ATen 0.086; predicted ~0.045),
# ConvNeXt's permuted layer norm (predicted 20-40% below unstaged).
for tg in mixer32 convnext_ln; do
  timeout 70 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
    --variants "d:;u:--unstaged-transposed" --plan "" --json $OUT/knobs108-$tg.json \
    bench/next-gpu/graphs/tr109/$tg.graph.txt > $OUT/knobs108-$tg.log 2>&1
  echo "knobs $tg rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch" $OUT/knobs108-$tg.log | cut -c1-200; grep -A9 "^graph region" $OUT/knobs108-$tg.log | cut -c1-200
done
g=bench/next-gpu/graphs/bn105/levit_bn.graph.txt
for v in "d:" "s1:--split-shape 0,1,0" "s256:--split-shape 256,4,0" "a4s1:--split-ahead 4 --split-shape 0,1,0" "a8s1:--split-ahead 8 --split-shape 0,1,0" "b:--split-batched-combine" "ab8:--split-batched-combine --split-ahead 8 --split-shape 0,1,0"; do
  n=${v%%:*}; a=${v#*:}
  $KB_REWRITE codegen $a $g -o /tmp/lb-$n > /dev/null
done
# The SASS of the default and a4s1 kernels: whether the eight float4 loads
# of a trip are issued before their first use.
for n in d a4s1; do
  (echo '#include <cuda_runtime.h>'; cat /tmp/lb-$n/kb_region_0.cu) > /tmp/sass-$n.cu
  nvcc -arch=sm_90 -cubin -O3 -Xptxas -v /tmp/sass-$n.cu -o /tmp/sass-$n.cubin 2>&1 | grep -E 'registers'
  cuobjdump -sass /tmp/sass-$n.cubin > $OUT/sass108-$n.txt 2>&1 || nvdisasm /tmp/sass-$n.cubin > $OUT/sass108-$n.txt
done
timeout 150 python3 bench/probes/split_phases.py /tmp/lb-{d,s1,a8s1,b,ab8}/kb_region_0.job.json /tmp/lb-{d,a8s1,b}/kb_region_5.job.json 2>&1 | tee $OUT/phases108.log
timeout 200 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;s1:--split-shape 0,1,0;a4s1:--split-ahead 4 --split-shape 0,1,0;a8s1:--split-ahead 8 --split-shape 0,1,0;b:--split-batched-combine;ab8:--split-batched-combine --split-ahead 8 --split-shape 0,1,0" \
  --plan "" --json $OUT/knobs108.json $g > $OUT/knobs108.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch" $OUT/knobs108.log | cut -c1-200; grep -A9 "^graph region" $OUT/knobs108.log | cut -c1-200
# levit_128 end to end under whatever the knobs say (the default plan
# here; rerun with the winner made default), and a fresh seed.
timed_slice slice108 20261319 2 29 ${DEADLINE:-560}
forward_choices /tmp/slice108.json
(cd $OUT && tar czf logs108.tgz *.log)
