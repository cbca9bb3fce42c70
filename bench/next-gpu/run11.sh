#!/usr/bin/env bash
# Session 27's second command. Part 1, end to end: gen-20261212 task 5
# (the fused mean -> sub -> sub -> exp region, which kb-verify's per-element
# rule for values near 4.6e37 rejected; predicted 0.485 -> ~0.44 ms), the
# LLaMA decoder (its CUDA graph capture failed on a host-to-device copy of
# a constant, now computed once), and the two gen-20261213 tasks whose
# regions the broadcast-back rule changed (4, 47: ~0.015 and ~0.05 ms
# less). Part 2: a layer norm probe (below). Part 3: a fresh seed,
# 20261214, with the time left.
set -uo pipefail
source bench/next-gpu/prepare.sh
select_tasks 20261212:5 20261213:4 20261213:47
mkdir -p /tmp/rt/models && cp bench/models/12_llama_decoder.py /tmp/rt/models/
timeout 280 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 250 \
  "${dirs[@]}" --dir /tmp/rt/models --prepare 8 --json $OUT/sel.json --runs 30 --fast-math --task-timeout 150 --work /tmp/kbw11 > $OUT/sel.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|vs comp|True|False|correct" $OUT/sel.log | cut -c1-220
# Part 2: gen-20261212 task 2's layer norm over rows of 8192 (0.218 ms,
# 2.5 TB/s, as ATen's 0.220) in other row layouts: predicted the register
# forms ~0.15 ms (one read of the row from DRAM, no shared-memory phase).
timeout 120 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "base:--fast-math;stream:--fast-math --shared-row-max 1;stream1024:--fast-math --shared-row-max 1 --row-block 1024;reg1024:--fast-math --register-row-max 8192 --row-block 1024;reg512:--fast-math --register-row-max 8192 --row-block 512" \
  --plan "layer_norm" --json $OUT/probe-ln8192.json bench/next-gpu/graphs/gen20261212_2_ln8192.graph.txt > $OUT/probe-ln8192.log 2>&1
echo "probe rc $? $(( $(date +%s)-t0 ))s"; grep -E "accepted|rejected|failed" $OUT/probe-ln8192.log | cut -c1-200
left=$(( 585 - ($(date +%s)-t0) ))
timeout $left scripts/gpu-bench-slice --seed 20261214 --gen 8 --json $OUT/slice.json --runs 30 --fast-math --budget-s $(( left - 30 )) --task-timeout 110 > $OUT/slice.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|vs comp|True|False|correct" $OUT/slice.log | cut -c1-220
tar czf $OUT/kbw11.tgz -C /tmp --exclude='*.so' --exclude='*.o' --exclude='*.cubin' kbw11 2>/dev/null; ls -la $OUT
