#!/usr/bin/env bash
# Session 48, not yet run (~9.5 min; repack dist first: the layer norm's
# ordered statistics are newer than run86's pack). (1) The C++ layer norm
# with ATen's vectorized statistics in its order: prediction 3 of 3 verified
# (run86: the module case rejected on rows of 8, 7.1e-5). (2) bench/paper.py
# against the simulated server (vLLM flavour; correct 0.4, wrong 0.2,
# compile_error 0.3, truncated 0.1), KernelBench levels 1-2 tasks 1-5, all
# regimes, n = 1, 2, 4, 8, with the end-to-end check cached by the kernels a
# ModelNew runs: prediction it finishes in ~300 s (run86 ran out of its 480 s
# after 8 of 10 tasks, the checks repeated per regime) and the recount
# agrees (wrong replies now offset float4 stores too). Then --replay.
set -uo pipefail
source bench/next-gpu/prepare.sh
flags="$(python3 -c 'from torch.utils.cpp_extension import include_paths as p; print(" ".join("-I" + d for d in p()))')"
timeout 150 $KB_REWRITE rewrite test/Rewrite/cxx-rewrite-layer-norm.cpp -o /tmp/ln87 --verify on \
  --kb-verify $KBV --verify-harness -- -std=c++17 $flags > $OUT/ln87.log 2>&1
echo "layer norm rc $? $(( $(date +%s)-t0 ))s"; grep -E "rewritten|left|rejected" $OUT/ln87.log | cut -c1-300
timeout $(( 470 - ($(date +%s)-t0) )) python3 test/Model/paper_experiment.py --graphs /tmp/p87/graphs \
  --kernelbench bench/kernelbench --levels 1,2 --tasks 1-5 --work /tmp/p87/work --kb-rewrite $KB_REWRITE \
  --rates correct=0.4,wrong=0.2,compile_error=0.3,truncated=0.1 --flavor vllm -- \
  --samples 1,2,4,8 --rounds 2 --kb-verify $KBV --runs 10 \
  --table $OUT/paper87.md --svg $OUT/paper87.svg --json $OUT/paper87.json > $OUT/paper87.log 2>&1
echo "paper rc $? $(( $(date +%s)-t0 ))s"; tail -24 $OUT/paper87.log | cut -c1-260
timeout $(( 585 - ($(date +%s)-t0) )) python3 bench/paper.py --replay /tmp/p87/work --work /tmp/p87/replay \
  --kb-rewrite $KB_REWRITE --kb-verify $KBV --runs 10 --table $OUT/paper87_replay.md \
  --json $OUT/paper87_replay.json > $OUT/paper87_replay.log 2>&1
echo "replay rc $? $(( $(date +%s)-t0 ))s"; tail -14 $OUT/paper87_replay.log | cut -c1-260
diff <(cut -d'|' -f2-5 $OUT/paper87.md) <(cut -d'|' -f2-5 $OUT/paper87_replay.md) && echo "replay table: same"
(cd /tmp/p87 && tar czf $OUT/paper87_work.tgz work/*.json work/*/*.json work/*/*/transcript.jsonl 2>/dev/null)
