#!/usr/bin/env bash
# Session 48 (~9.5 min). (1) The C++ layer norm after the NaN-row fix (ATen's
# NaN row only in its vectorized kernel): prediction 3 of 3 verified (run84: 2,
# the module case on rows of 7 rejected). (2) bench/paper.py against the
# simulated server (vLLM flavour; rates correct 0.4, wrong 0.2, compile_error
# 0.3, truncated 0.1) over KernelBench levels 1-2 tasks 1-5, all four regimes,
# n = 1, 2, 4, 8, with KernelBench's check of each ModelNew; the recount from
# the transcripts must agree. Prediction: level 1 tasks 1-4 have no region
# (GEMMs stay in cuBLAS); per region an attempt is correct with p = 0.4 for
# zero-shot/profile (pass@1 ~0.4 on one-region tasks, 0.16 on two), higher
# for refine/agent (repairs draw again). Then --replay with kb-verify re-run.
set -uo pipefail
source bench/next-gpu/prepare.sh
flags="$(python3 -c 'from torch.utils.cpp_extension import include_paths as p; print(" ".join("-I" + d for d in p()))')"
timeout 150 $KB_REWRITE rewrite test/Rewrite/cxx-rewrite-layer-norm.cpp -o /tmp/ln86 --verify on \
  --kb-verify $KBV --verify-harness -- -std=c++17 $flags > $OUT/ln86.log 2>&1
echo "layer norm rc $? $(( $(date +%s)-t0 ))s"; grep -E "rewritten|left|rejected" $OUT/ln86.log | cut -c1-300
timeout $(( 480 - ($(date +%s)-t0) )) python3 test/Model/paper_experiment.py --graphs /tmp/p86/graphs \
  --kernelbench bench/kernelbench --levels 1,2 --tasks 1-5 --work /tmp/p86/work --kb-rewrite $KB_REWRITE \
  --rates correct=0.4,wrong=0.2,compile_error=0.3,truncated=0.1 --flavor vllm -- \
  --samples 1,2,4,8 --rounds 2 --kb-verify $KBV --runs 10 \
  --table $OUT/paper86.md --svg $OUT/paper86.svg --json $OUT/paper86.json > $OUT/paper86.log 2>&1
echo "paper rc $? $(( $(date +%s)-t0 ))s"; tail -30 $OUT/paper86.log | cut -c1-260
timeout $(( 585 - ($(date +%s)-t0) )) python3 bench/paper.py --replay /tmp/p86/work --work /tmp/p86/replay \
  --kb-rewrite $KB_REWRITE --kb-verify $KBV --runs 10 --table $OUT/paper86_replay.md \
  --json $OUT/paper86_replay.json > $OUT/paper86_replay.log 2>&1
echo "replay rc $? $(( $(date +%s)-t0 ))s"; tail -14 $OUT/paper86_replay.log | cut -c1-260
(cd /tmp/p86 && tar czf $OUT/paper86_transcripts.tgz work/*/*/transcript.jsonl 2>/dev/null)
