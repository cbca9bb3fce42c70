#!/usr/bin/env bash
# Session 37, after run47/run48: (1) kb-verify (NaN accepted where the
# float64 truth lies beyond float32's range) over seed 20261228 task 1's
# region (rejected in run48: candidate NaN, eager -1, float64 -1.6e39) and
# over fixture rows_wide_lanes; (2) the wide-lane default (up to four
# float4s a lane for many rows of 65-256) against the old 32 lanes over
# layer norms, softmax, var and logsumexp of such rows (predicted: 5-15%
# faster where the row has two statistics or two passes); (3) seed 20261228
# task 1 end to end (was 0.549 with the region in ATen; compile 0.430;
# predicted ~0.40); (4) a fresh seed, 20261231, with RegNetY-800MF and
# ConvNeXt-Tiny.
set -uo pipefail
source bench/next-gpu/prepare.sh
rm -rf /tmp/vf && mkdir -p /tmp/vf && cp test/fixtures/graphs/torch-1.13/rows_wide_lanes.* bench/next-gpu/graphs/lanes36/s28t1_bmm_ln128.* /tmp/vf/
timeout 120 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/vf > $OUT/vf49.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; tail -8 $OUT/vf49.log | cut -c1-220
g=bench/next-gpu/graphs
timeout 150 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;old:--vector-lanes 32" --plan "" --json $OUT/knobs49.json \
  $g/lanes37/ln200.graph.txt $g/lanes37/sm100.graph.txt $g/lanes37/var256.graph.txt $g/lanes37/lse128.graph.txt \
  $g/lanes36/ln128.graph.txt $g/lanes36/sm256.graph.txt > $OUT/knobs49.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch" $OUT/knobs49.log | cut -c1-200; grep -A8 "^graph region" $OUT/knobs49.log | cut -c1-200
select_tasks 20261228:1
timeout 100 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 90 \
  "${dirs[@]}" --prepare 8 --json $OUT/sel49.json --runs 30 --fast-math --task-timeout 90 --work /tmp/kbw49 > $OUT/sel49.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False" $OUT/sel49.log | cut -c1-250
left=$(( 575 - ($(date +%s)-t0) ))
timeout $left bash scripts/gpu-bench-slice --seed 20261231 --gen 6 --models 5,6 \
  --json /tmp/slice31.json --runs 30 --fast-math \
  --budget-s $(( left - 15 )) --task-timeout 150 > $OUT/slice31.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|geomean" $OUT/slice31.log | tail -12 | cut -c1-250
cp /tmp/slice31.json $OUT/ 2>/dev/null
