#!/usr/bin/env bash
# Session 52, the second call after run91.sh (warm host: kb-verify built):
# a fresh seed (20261306, 4 generated tasks, never run) and model 34
# clip_text (transformers CLIPTextModel, never measured), 20 runs,
# --fast-math. Prediction: 4/4 correct, geomean ~1.5x eager / ~1.2x
# compile on the seed (sessions 49-51's fresh seeds: 1.4-1.7x / 1.1-1.35x);
# clip_text ~1.25x eager, ~0.85x compile (t5_encoder's 1.31x / 0.86x: the
# same shape of work, attention and LayerNorm/GELU epilogues at batch 8).
set -uo pipefail
source bench/next-gpu/prepare.sh
timed_slice slice92 20261306 4 34 ${DEADLINE:-360}

# run91's selection timed out on seed 20261291 task 2 (70 s task limit)
# and never reached seed 20261251 task 1: both again with room.
select_tasks 20261291:2 20261251:1
left=$(( 585 - ($(date +%s) - t0) ))
timeout $left python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV "${dirs[@]}" \
  --json $OUT/sel92.json --runs 20 --fast-math --task-timeout 150 --work /tmp/kbw92 > $OUT/sel92.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "ok |WRONG|FAIL" $OUT/sel92.log | cut -c1-300
grep -h "^| kb_" /tmp/kbw92/*/*/rewritten/report.md 2>/dev/null | cut -c1-250

(cd $OUT && tar czf logs92.tgz *.log)
