#!/usr/bin/env bash
# Session 66: flat views inside regions (kb-form-regions joinView).
# Predictions (H100 or H200, 20 runs):
# - flat_views' 3 kernels and swin_t's 5 merged `matmul -> add -> view ->
#   add -> view -> softmax` regions accepted; each merged region about
#   0.4x the time of its ATen ops (bias add, mask add and softmax each
#   read and write the scores; the kernel reads them once and writes once).
# - swin_t (batch 16) end to end: ~0.1 ms faster than session 62's 6.595
#   ms on the H100 (the 5 regions of 6 blocks' scores, 2 x 29.5 MB saved in
#   stage 1 and proportionally less later), still below torch.compile
#   (5.776): the window partition / reverse copies (pad, roll, permute +
#   reshape) stay in ATen.
# Then run132's layer-norm-first regions and session 64's changed kernels.
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV
G=bench/next-gpu/graphs
cat > /tmp/one.sh <<'ONE'
j=$1
timeout 40 $KBV --job $j --no-cache | python3 -c "import json,sys; v=json.load(sys.stdin); c=v.get('candidate_timing') or {}; e=v.get('eager_timing') or {}; print('$(basename $(dirname $j))/$(basename $j .job.json)'[:60], v.get('status'), c.get('median_ms'), e.get('median_ms'), (v.get('detail') or '')[:100])"
ONE
export KBV
if fits 60; then
  $KB_REWRITE codegen test/fixtures/graphs/torch-1.13/flat_views.graph.txt -o /tmp/fv133 > /dev/null
  S=test/fixtures/graphs/torchvision-0.26/swin_t
  $KB_REWRITE codegen $S.graph.txt --params $S.params.json -o /tmp/sw133 > /dev/null
  (ls /tmp/fv133/*.job.json; grep -l '"aten::view"\|aten::view' /tmp/sw133/*.job.json | xargs grep -l softmax) | xargs -P 1 -n 1 bash /tmp/one.sh > $OUT/views133.txt 2>&1
  echo "views $(( $(date +%s)-t0 ))s"; cat $OUT/views133.txt
fi
timed_slice slice133 20261371 0 16 $(( ${DEADLINE:-540} - 150 ))
if fits 60; then
  for g in $G/tt132/*.graph.txt; do
    $KB_REWRITE codegen $g -o /tmp/tt132/$(basename $g .graph.txt) > /dev/null
  done
  ls /tmp/tt132/*/*.job.json | xargs -P 1 -n 1 bash /tmp/one.sh > $OUT/new132.txt 2>&1
  echo "new $(( $(date +%s)-t0 ))s"; cat $OUT/new132.txt
fi
if fits 80; then
  ls $G/tt130/changed/*.job.json | xargs -P 6 -n 1 bash /tmp/one.sh > $OUT/changed132.txt 2>&1
  echo "changed $(( $(date +%s)-t0 ))s: $(grep -c " accepted " $OUT/changed132.txt) accepted"
  grep -v " accepted " $OUT/changed132.txt | head -20
fi
(cd $OUT && tar czf logs133.tgz *.log 2>/dev/null && rm -f *.log)
