#!/usr/bin/env bash
# Session 56, second call (~8 min): the quad split's batched block combine
# as the default (run108: 10-19% faster on levit's seven batch norms, the
# same bits by construction). kb-verify on the quad fixtures (predicted:
# accepted, as run105); where the time of the largest one goes now
# (split_phases, fixed to name each job's build apart); then levit_128 and
# mixer_b16 end to end and a fresh seed (predicted levit 4.6-4.7 ms, from
# run108's 4.820: regions 5 and 6 of the probe now beat ATen).
set -uo pipefail
source bench/next-gpu/prepare.sh
verify_fixtures verify109 60 6 test/fixtures/graphs/torch-1.13/split_bn1d_prologue.* test/fixtures/graphs/torch-1.13/split_softmax_strided.* test/fixtures/graphs/torch-1.13/linear_norm_views.*
g=bench/next-gpu/graphs/bn105/levit_bn.graph.txt
for v in "d:" "ser:--split-serial-combine" "a8s1:--split-ahead 8 --split-shape 0,1,0"; do
  n=${v%%:*}; a=${v#*:}
  $KB_REWRITE codegen $a $g -o /tmp/lb-$n > /dev/null
done
timeout 90 python3 bench/probes/split_phases.py /tmp/lb-{d,ser,a8s1}/kb_region_0.job.json /tmp/lb-d/kb_region_5.job.json 2>&1 | tee $OUT/phases109.log
# The SASS of region 0 (whether the passes' loads are issued ahead of
# their uses and stores), and which profilers the host has.
(echo '#include <cuda_runtime.h>'; cat /tmp/lb-d/kb_region_0.cu) > /tmp/sass-d.cu
nvcc -arch=sm_90 -cubin -O3 /tmp/sass-d.cu -o /tmp/sass-d.cubin && cuobjdump -sass /tmp/sass-d.cubin > $OUT/sass109.log 2>&1
ls /usr/local/cuda/bin /opt/nvidia 2>/dev/null | grep -iE 'ncu|nsys|cuobjdump|nvdisasm|nsight' | tr '\n' ' '; echo
timed_slice slice109 20261320 2 29,26 ${DEADLINE:-470}
forward_choices /tmp/slice109.json
(cd $OUT && tar czf logs109.tgz *.log && rm -f *.log)
