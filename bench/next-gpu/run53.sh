#!/usr/bin/env bash
# Session 38: issue 24's real models timed end to end, third part: models 31-37 (GhostNet,
# NF-ResNet-50, T5 encoder, CLIP text, GPT-NeoX, SegFormer, Whisper encoder,
# its decoder heads fixed) and the fresh seed 20261232 (6 generated tasks).
set -uo pipefail
source bench/next-gpu/prepare.sh
left=$(( 570 - ($(date +%s)-t0) ))
timeout $left bash scripts/gpu-bench-slice --seed 20261232 --gen 6 --models 31,32,33,34,35,36,37 \
  --json /tmp/slice53.json --runs 20 --fast-math \
  --budget-s $(( left - 15 )) --task-timeout 150 > $OUT/slice53.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|geomean" $OUT/slice53.log | tail -14 | cut -c1-250
cp /tmp/slice53.json $OUT/ 2>/dev/null
# Swin-T's and Whisper's graphs back for the CPU-side coverage table.
find /tmp/kb-slice -name '16_swin_t.*' -o -name '37_whisper_encoder.*' | grep -E 'graph.txt|params.json' | xargs tar czf $OUT/graphs53.tar.gz 2>/dev/null; ls -la $OUT/graphs53.tar.gz
