#!/usr/bin/env bash
# Session 64's second call: a training batch norm after an anchor takes
# the next stage (softmax over any dim, layer/group norm, logsumexp, a sum
# or mean) in one region (crossRow), its statistics a first phase; row
# kernels read operands constant along a row at the row's coordinates.
# Predictions: each merged region faster than the split pair by about the
# norm output's write and read back (2 x 16-30 MB, ~0.01-0.02 ms at
# 3 TB/s): s31t2 0.112 -> ~0.08 ms; every changed kernel accepted; every
# task correct, none slower.
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV
G=bench/next-gpu/graphs
mkdir -p /tmp/old && tar xzf .carry/old/kb-rewrite-0.1.0-linux-x86_64.tar.gz -C /tmp/old
OLD=/tmp/old/kb-rewrite-0.1.0/bin/kb-rewrite
graphs="$G/tt127/s31t2.graph.txt $(ls $G/tt130/x*.graph.txt)"
# The merged regions (new) against session 63's split pairs (old).
if fits 200; then
for b in new old; do
  B=$KB_REWRITE; [[ $b == old ]] && B=$OLD
  timeout 100 python3 bench/probes/codegen_knobs.py --kb-rewrite $B --kb-verify $KBV \
    --variants "$b:" --plan "" --json $OUT/knobs130-$b.json $graphs > $OUT/knobs130-$b.log 2>&1
  echo "knobs $b rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch|failed" $OUT/knobs130-$b.log | cut -c1-200
  grep -E " ms \(ATen" $OUT/knobs130-$b.log | cut -c1-110
done
fi
# The kernels whose text changed (row coordinates, 32-bit channels; every
# fixture): accepted. Four at a time (their times are noisy for it).
if fits 90; then
cat > /tmp/one.sh <<'ONE'
j=$1
timeout 60 $KBV --job $j --no-cache | python3 -c "import json,sys; v=json.load(sys.stdin); c=v.get('candidate_timing') or {}; e=v.get('eager_timing') or {}; print('$(basename $j .job.json)'[:60], v.get('status'), c.get('median_ms'), e.get('median_ms'), (v.get('detail') or '')[:100])"
ONE
export KBV
ls $G/tt130/changed/*.job.json | xargs -P 4 -n 1 bash /tmp/one.sh > $OUT/changed130.txt 2>&1
echo "changed $(( $(date +%s)-t0 ))s: $(grep -c " accepted " $OUT/changed130.txt) accepted"; grep -v " accepted " $OUT/changed130.txt | head -20
fi
# C++ chains through a later operand (sub(b, x), b / x, addcmul(beta,
# alpha, x), b.div(x)): rewritten, verified by kb-verify --cxx.
if fits 150; then
rw rw130 test/Rewrite/cxx-rewrite-commuted.cpp /tmp/rw130
grep -E "rewritten|rejected|left as is|verified|error" $OUT/rw130.log | cut -c1-160 | head -20
fi
# Hand-edited kernels of s31t2 (tt130/hand): the split batch norm with the
# conv bias read at its row (its channel) instead of through a division of
# each element's index; the merged kernel with phase 2's channel in 64-bit
# (ctl) and 32-bit math.
if fits 40; then
for j in $G/tt130/hand/*.job.json; do
  timeout 30 $KBV --job $j --no-cache | python3 -c "import json,sys; v=json.load(sys.stdin); c=v.get('candidate_timing') or {}; e=v.get('eager_timing') or {}; print('$(basename $j .job.json)', v.get('status'), c.get('median_ms'), e.get('median_ms'), (v.get('detail') or '')[:120])"
done
echo "hand $(( $(date +%s)-t0 ))s"
fi
if fits 120; then
mkdir -p /tmp/xt && cp $G/tt130/tasks/*.py /tmp/xt/
timeout $(( ${DEADLINE:-540} - ($(date +%s)-t0) - 10 )) python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --dir /tmp/xt \
  --json $OUT/xt130.json --runs 20 --fast-math --prepare 8 --task-timeout 150 --work /tmp/kbw-xt > $OUT/xt130.log 2>&1
echo "xt rc $? $(( $(date +%s)-t0 ))s"; grep -E "ok |WRONG|FAIL|geomean" $OUT/xt130.log | cut -c1-300
grep -h "^| kb_" /tmp/kbw-xt/*/*/rewritten/report.md 2>/dev/null | cut -c1-200
fi
(cd $OUT && tar czf logs130.tgz *.log && rm -f *.log)
