#!/usr/bin/env bash
# Session 36, after run45: softmax-only staging with float4 loads of an
# argument and float4 stores (predicted softmax over 14: 0.228 -> ~0.20 ms),
# layer norms in registers only on an argument (ln3072 after an add back to
# staged: ~0.063); kb-verify over rows_staged; then a fresh seed, 20261229.
set -uo pipefail
source bench/next-gpu/prepare.sh
rm -rf /tmp/vf && mkdir -p /tmp/vf && cp test/fixtures/graphs/torch-1.13/rows_staged.* /tmp/vf/
timeout 100 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/vf > $OUT/vf46.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; tail -6 $OUT/vf46.log | cut -c1-200
g=bench/next-gpu/graphs/short36
timeout 120 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;lanes:--lane-short-rows;r2k:--register-row-max 2048" --plan "" \
  --json $OUT/knobs46.json $g/sm14.graph.txt $g/smmul5.graph.txt $g/lsm7.graph.txt $g/ln2080.graph.txt $g/ln3072.graph.txt > $OUT/knobs46.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; grep -A8 "^graph region" $OUT/knobs46.log | cut -c1-200
left=$(( 460 - ($(date +%s)-t0) ))
timeout $left bash scripts/gpu-bench-slice --seed 20261229 --gen 6 \
  --json /tmp/slice29.json --runs 30 --fast-math \
  --budget-s $(( left - 15 )) --task-timeout 120 > $OUT/slice29.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|geomean" $OUT/slice29.log | tail -10 | cut -c1-250
cp /tmp/slice29.json $OUT/ 2>/dev/null
