#!/usr/bin/env bash
# Session 27's second command. Part 1, end to end: gen-20261212 task 5
# (the fused mean -> sub -> sub -> exp region, which kb-verify's per-element
# rule for values near 4.6e37 rejected; predicted 0.485 -> ~0.44 ms), the
# LLaMA decoder (its CUDA graph capture failed on a host-to-device copy of
# a constant, now computed once), and the two gen-20261213 tasks whose
# regions the broadcast-back rule changed (4, 47). Part 2: a fresh
# seed, 20261214, with the time left.
set -uo pipefail
source bench/next-gpu/prepare.sh
select_tasks 20261212:5 20261213:4 20261213:47
mkdir -p /tmp/rt/models && cp bench/models/12_llama_decoder.py /tmp/rt/models/
timeout 280 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 250 \
  "${dirs[@]}" --dir /tmp/rt/models --prepare 8 --json $OUT/sel.json --runs 30 --fast-math --task-timeout 150 --work /tmp/kbw11 > $OUT/sel.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|vs comp|True|False|correct" $OUT/sel.log | cut -c1-220
left=$(( 585 - ($(date +%s)-t0) ))
timeout $left scripts/gpu-bench-slice --seed 20261214 --gen 8 --json $OUT/slice.json --runs 30 --fast-math --budget-s $(( left - 30 )) --task-timeout 110 > $OUT/slice.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|vs comp|True|False|correct" $OUT/slice.log | cut -c1-220
tar czf $OUT/kbw11.tgz -C /tmp --exclude='*.so' --exclude='*.o' --exclude='*.cubin' kbw11 2>/dev/null; ls -la $OUT
