#!/usr/bin/env bash
# For the next session (~8 min). run113: every levit batch norm beats ATen
# now (0.0212 ms against 0.0279 at 128 x 12544); its timeline: two grid
# barriers of ~1.4 us each from the last arrival to the first block out,
# the finalize 2.0 us, the element pass 4-6 us. (1) `--split-barrier-store`
# (the last arrival releases with one 8-byte store of count 0 and the next
# generation, instead of an exchange, a fence and an increment): predicted
# 0.5-1 us off each barrier, region 0 ~0.020 ms; and `--split-fold-unroll 4`
# (the finalize's chunk loop countable and unrolled): predicted the
# finalize 2.0 -> ~1.2 us. kb-verify accepts every variant (codegen_knobs
# verifies each). (2) The timeline of both. (3) levit_128 end to end
# (run113 did not reach it: its batch norms now all beat ATen, so the 43
# regions dropped in run109 should mostly be kept: predicted 4.73 -> ~4.3
# ms), timm resmlp_12 (never measured) and a fresh seed.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 170 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;bs:--split-barrier-store;fu:--split-fold-unroll 4;bsfu:--split-barrier-store --split-fold-unroll 4" \
  --plan "" --json $OUT/knobs114-bn.json bench/next-gpu/graphs/bn105/levit_bn.graph.txt > $OUT/knobs114-bn.log 2>&1
echo "knobs bn rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch" $OUT/knobs114-bn.log | cut -c1-200; grep -A8 "^graph region" $OUT/knobs114-bn.log | cut -c1-200
$KB_REWRITE codegen bench/next-gpu/graphs/bn105/levit_bn.graph.txt -o /tmp/lb-n > /dev/null
$KB_REWRITE codegen --split-barrier-store --split-fold-unroll 4 bench/next-gpu/graphs/bn105/levit_bn.graph.txt -o /tmp/lb-bf > /dev/null
timeout 60 python3 bench/probes/split_phases.py /tmp/lb-n/kb_region_0.job.json /tmp/lb-bf/kb_region_0.job.json 2>&1 | grep -E "base|bare|timeline" | tee $OUT/phases114.log
timed_slice slice114 20261323 2 29,38 ${DEADLINE:-540}
forward_choices /tmp/slice114.json
(cd $OUT && tar czf logs114.tgz *.log && rm -f *.log)
