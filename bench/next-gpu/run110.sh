#!/usr/bin/env bash
# Session 56, third call (~4 min): where levit's first batch norm spends
# its 40 us. The SASS (run109) shows the passes' float4 loads issued ahead
# of their uses and only ~2 us of FP64 work a block, so the time is in
# waits: ncu's warp-state and memory sections on one launch of the
# split_phases driver (base and no-barrier variants). And mixer_b16's
# graph exported here (timm), whose `add -> layer_norm` region took 0.106
# ms against ATen's 0.087 while the hand-built probe of it took 0.037.
set -uo pipefail
source bench/next-gpu/prepare.sh
g=bench/next-gpu/graphs/bn105/levit_bn.graph.txt
$KB_REWRITE codegen $g -o /tmp/lb-d > /dev/null
KB_PHASES_KEEP=/tmp/ph110 timeout 60 python3 bench/probes/split_phases.py /tmp/lb-d/kb_region_0.job.json /tmp/lb-d/kb_region_5.job.json 2>&1 | tee $OUT/phases110.log
ls /tmp/ph110 | grep -v '\.cu$' | tr '\n' ' '; echo
for v in base nosync; do
  exe=$(ls /tmp/ph110/0_*_$v 2>/dev/null | head -1)
  [[ -n "$exe" ]] || continue
  timeout 90 /usr/local/cuda/bin/ncu --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
    --section SourceCounters "$exe" > $OUT/ncu110-$v.log 2>&1
  echo "ncu $v rc $? $(( $(date +%s)-t0 ))s"; grep -E "Duration|Stall|Warp Cycles|Issued Warp|Eligible|DRAM Throughput|Memory Throughput|ERR" $OUT/ncu110-$v.log | head -24 | cut -c1-150
done
mkdir -p /tmp/mx110
timeout 120 python3 tools/kb-export/kb_export.py bench/models/26_timm_mixer_b16.py -o /tmp/mx110 --name mixer_b16 > $OUT/export110.log 2>&1
echo "export rc $? $(( $(date +%s)-t0 ))s"
$KB_REWRITE codegen /tmp/mx110/mixer_b16.graph.txt -o /tmp/mx110/cg >> $OUT/export110.log 2>&1
(cd /tmp/mx110 && tar czf $OUT/mixer110.tgz mixer_b16.graph.txt mixer_b16.params.json cg/kb_region_2.cu cg/kb_region_2.job.json cg/kb_region_6.cu cg/kb_region_6.job.json)
(cd $OUT && tar czf logs110.tgz *.log && rm -f *.log)
