#!/usr/bin/env bash
# Session 64: run130.sh cut to what 460 s of device time left can hold
# (refused starts took the rest). Predictions as run130.sh's: each merged
# region faster than session 63's split pair by about the batch norm
# output's write and read back; every changed fixture kernel accepted.
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV
G=bench/next-gpu/graphs
mkdir -p /tmp/old && tar xzf .carry/old/kb-rewrite-0.1.0-linux-x86_64.tar.gz -C /tmp/old
OLD=/tmp/old/kb-rewrite-0.1.0/bin/kb-rewrite
graphs="$G/tt127/s31t2.graph.txt $(ls $G/tt130/x*.graph.txt)"
knobs() { # VARIANT BINARY LIMIT
  timeout $3 python3 bench/probes/codegen_knobs.py --kb-rewrite $2 --kb-verify $KBV \
    --variants "$1:" --plan "" --json $OUT/knobs131-$1.json $graphs > $OUT/knobs131-$1.log 2>&1
  echo "knobs $1 rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch|failed" $OUT/knobs131-$1.log | cut -c1-200
  grep -E " ms \(ATen" $OUT/knobs131-$1.log | cut -c1-110
}
if fits 45; then
cat > /tmp/one.sh <<'ONE'
j=$1
timeout 40 $KBV --job $j --no-cache | python3 -c "import json,sys; v=json.load(sys.stdin); c=v.get('candidate_timing') or {}; e=v.get('eager_timing') or {}; print('$(basename $j .job.json)'[:60], v.get('status'), c.get('median_ms'), e.get('median_ms'), (v.get('detail') or '')[:100])"
ONE
export KBV
ls $G/tt130/changed/*.job.json | xargs -P 6 -n 1 bash /tmp/one.sh > $OUT/changed131.txt 2>&1
echo "changed $(( $(date +%s)-t0 ))s: $(grep -c " accepted " $OUT/changed131.txt) accepted"; grep -v " accepted " $OUT/changed131.txt | head -20
fi
fits 40 && knobs new $KB_REWRITE 40
fits 60 && knobs old $OLD 70
if fits 150; then
rw rw131 test/Rewrite/cxx-rewrite-commuted.cpp /tmp/rw131
grep -E "rewritten|rejected|left as is|verified|error" $OUT/rw131.log | cut -c1-160 | head -20
fi
(cd $OUT && tar czf logs131.tgz *.log && rm -f *.log)
