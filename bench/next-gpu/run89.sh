#!/usr/bin/env bash
# Session 49 (~7 min). Issue 28's "done when" in one command: bench/paper.py
# through test/Model/paper_experiment.py against the simulated server
# (llama-server flavour this time; correct 0.4, wrong 0.2, compile_error
# 0.3, truncated 0.1), KernelBench levels 1-2 tasks 1-5, all four regimes,
# n = 1, 2, 4, 8, then --replay with verification re-run. run87 ran out
# of time after 9 of 10 tasks: exports and pool rewrites were serial
# (~160 s), now parallel. Prediction: ~250 s for the run, ~100 s for the
# replay, recount agrees, replay table identical.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout $(( 420 - ($(date +%s)-t0) )) python3 test/Model/paper_experiment.py --graphs /tmp/p89/graphs \
  --kernelbench bench/kernelbench --levels 1,2 --tasks 1-5 --work /tmp/p89/work --kb-rewrite $KB_REWRITE \
  --rates correct=0.4,wrong=0.2,compile_error=0.3,truncated=0.1 --flavor llama-server -- \
  --samples 1,2,4,8 --rounds 2 --kb-verify $KBV --runs 10 \
  --table $OUT/paper89.md --svg $OUT/paper89.svg --json $OUT/paper89.json > $OUT/paper89.log 2>&1
echo "paper rc $? $(( $(date +%s)-t0 ))s"; grep -vE "^\[level1_[1-4]_" $OUT/paper89.log | tail -30 | cut -c1-200
timeout $(( 585 - ($(date +%s)-t0) )) python3 bench/paper.py --replay /tmp/p89/work --work /tmp/p89/replay \
  --kb-rewrite $KB_REWRITE --kb-verify $KBV --runs 10 --table $OUT/paper89_replay.md \
  --json $OUT/paper89_replay.json > $OUT/paper89_replay.log 2>&1
echo "replay rc $? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/paper89_replay.log | cut -c1-200
diff <(cut -d'|' -f2-5 $OUT/paper89.md) <(cut -d'|' -f2-5 $OUT/paper89_replay.md) && echo "replay table: same"
(cd /tmp/p89 && tar czf $OUT/paper89_work.tgz work/*.json work/*/*.json work/*/*/transcript.jsonl 2>/dev/null)
