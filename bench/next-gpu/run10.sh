#!/usr/bin/env bash
# Session 27: reductions broadcast back over their rows (one row kernel for
# x - x.mean(1, keepdim=True), RMSNorm, x / x.norm(...)) and adaptive
# pooling over contiguous windows as rows. Probes (predicted 0 bits where
# the ATen op is exact: amax; within 1e-4 for the means and norms), then
# end to end: gen-20261212 task 5 (0.485 -> ~0.44 ms), gen-20261211 task 1
# (one split kernel with a grid barrier: ~0.27, as the two kernels were)
# and task 2 (the pool's region 0.265 -> ~0.02 ms), and a LLaMA decoder.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 200 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "base:--fast-math" --plan "." --json $OUT/probe-rbb.json \
  test/CodeGen/Inputs/reduce_broadcast_back.graph.txt bench/next-gpu/graphs/amp_big.graph.txt \
  bench/next-gpu/graphs/gen20261211_1_mean_dim0_prologue.graph.txt > $OUT/probe-rbb.log 2>&1
echo "probe rc $? $(( $(date +%s)-t0 ))s"; grep -E "accepted|rejected|failed|bits" $OUT/probe-rbb.log | cut -c1-200
select_tasks 20261212:5 20261211:1 20261211:2
mkdir -p /tmp/rt/models && cp bench/models/12_llama_decoder.py /tmp/rt/models/
timeout $(( 590 - ($(date +%s)-t0) )) python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s $(( 545 - ($(date +%s)-t0) )) \
  "${dirs[@]}" --dir /tmp/rt/models --prepare 8 --json $OUT/sel.json --runs 30 --fast-math --task-timeout 150 --work /tmp/kbw10 > $OUT/sel.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|vs comp|True|False|correct" $OUT/sel.log | cut -c1-220
tar czf $OUT/kbw10.tgz -C /tmp --exclude='*.so' --exclude='*.o' kbw10 2>/dev/null; ls -la $OUT
