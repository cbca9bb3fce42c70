#!/usr/bin/env bash
# Session 27's first command: the adaptive max pool kernels built after
# session 26's GPU time (predicted 0 bits; the (2, 1) windows of 32 x 56
# slower than ATen's), then gen-20261211 tasks 1 (split shape 512, 3, 16
# for the recomputed prologue: predicted ~0.28 ms) and 2 (conv2d +
# adaptive_max_pool2d: no longer a fallback) end to end.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 150 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "base:--fast-math" --plan "adaptive_max_pool" --json $OUT/probe-amp.json \
  test/CodeGen/Inputs/adaptive_max_pool.graph.txt bench/next-gpu/graphs/amp_big.graph.txt > $OUT/probe-amp.log 2>&1
echo "amp rc $? $(( $(date +%s)-t0 ))s"; cut -c1-160 $OUT/probe-amp.log | tail -20
python3 bench/gen_tasks.py --count 3 --seed 20261211 -o /tmp/rt/all > /dev/null
mkdir -p /tmp/rt/s && cp /tmp/rt/all/manifest.json /tmp/rt/all/1_*.py /tmp/rt/all/2_*.py /tmp/rt/s/
timeout $(( 590 - ($(date +%s)-t0) )) python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s $(( 540 - ($(date +%s)-t0) )) \
  --dir /tmp/rt/s --prepare 8 --json $OUT/sel.json --runs 30 --fast-math --task-timeout 150 --work /tmp/kbw9 > $OUT/sel.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|vs comp|True|False|correct" $OUT/sel.log | cut -c1-200
tar czf $OUT/kbw9.tgz -C /tmp kbw9 2>/dev/null; ls -la $OUT
