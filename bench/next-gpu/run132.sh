#!/usr/bin/env bash
# Session 65 (no device time left that session): verifies and times what
# sessions 64 and 65 built without the GPU.
# - Session 64's 44 changed fixture kernels (row coordinates, 32-bit
#   channels): every one accepted.
# - Session 65's layer norm -> same-row stage regions (emitHeldRowStats):
#   accepted, and each region faster than its ATen ops (a layer norm and a
#   softmax / norm / sum kernel). Predicted: ~0.5x the ATen pair's time
#   (one read and one write of the row instead of two each; e.g. the
#   [4096, 257] softmax region ~0.01 ms, s1365t133's [1469520, 16] region
#   ~0.13 ms against ~0.26).
# - Seed 20261365 tasks 133 (layer_norm -> softmax over rows of 16) and 67
#   (matmul -> ... -> layer_norm -> mean -> square) end to end: correct, and
#   faster than torch.compile (two kernels become one).
# - The C++ later-operand chains (session 64) under kb-verify --cxx.
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV
G=bench/next-gpu/graphs
cat > /tmp/one.sh <<'ONE'
j=$1
timeout 40 $KBV --job $j --no-cache | python3 -c "import json,sys; v=json.load(sys.stdin); c=v.get('candidate_timing') or {}; e=v.get('eager_timing') or {}; print('$(basename $j .job.json)'[:60], v.get('status'), c.get('median_ms'), e.get('median_ms'), (v.get('detail') or '')[:100])"
ONE
export KBV
if fits 60; then
  for g in $G/tt132/*.graph.txt; do
    $KB_REWRITE codegen $g -o /tmp/tt132/$(basename $g .graph.txt) > /dev/null
  done
  ls /tmp/tt132/*/*.job.json | xargs -P 1 -n 1 bash /tmp/one.sh > $OUT/new132.txt 2>&1
  echo "new $(( $(date +%s)-t0 ))s"; cat $OUT/new132.txt
fi
if fits 90; then
  ls $G/tt130/changed/*.job.json | xargs -P 6 -n 1 bash /tmp/one.sh > $OUT/changed132.txt 2>&1
  echo "changed $(( $(date +%s)-t0 ))s: $(grep -c " accepted " $OUT/changed132.txt) accepted"
  grep -v " accepted " $OUT/changed132.txt | head -20
fi
fits 200 && timed_tasks tasks132 200 90 20261365:133 20261365:67
if fits 150; then
  rw rw132 test/Rewrite/cxx-rewrite-commuted.cpp /tmp/rw132
  grep -E "rewritten|rejected|left as is|verified|error" $OUT/rw132.log | cut -c1-160 | head -20
fi
# Fresh seed and an unseen-lately model (levit_128) in what is left.
timed_slice slice132 20261370 3 29 ${DEADLINE:-540}
(cd $OUT && tar czf logs132.tgz *.log 2>/dev/null && rm -f *.log)
