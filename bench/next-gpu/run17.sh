#!/usr/bin/env bash
# Session 28's last device seconds: the LLaMA decoder's rewritten forward
# with 0-d factories made on the CPU, each call captured alone
# (bench/probes/capture_ops.py; predicted 0 failures, was 2 of 254).
set -uo pipefail
export PATH=/opt/torch/.venv/bin:$PATH
t0=$(date +%s)
tar xzf dist/kb-rewrite-0.1.0-linux-x86_64.tar.gz -C /tmp
KB_REWRITE=/tmp/kb-rewrite-0.1.0/bin/kb-rewrite
timeout 40 tools/kb-export/kb-export bench/models/12_llama_decoder.py -o /tmp/l --device cuda --python "$(command -v python3)" > $OUT/llama_export.log 2>&1
$KB_REWRITE rewrite /tmp/l/12_llama_decoder.graph.txt -o /tmp/l/rw --verify off --quiet --source bench/models/12_llama_decoder.py
grep -n "new_ones" /tmp/l/rw/model_new.py | grep -v OpCall | head -3
echo "rewritten $(( $(date +%s)-t0 ))s"
python3 bench/probes/capture_ops.py /tmp/l/rw bench/models/12_llama_decoder.py > $OUT/capture_ops.log 2>&1
echo "capture_ops rc $? $(( $(date +%s)-t0 ))s"; tail -6 $OUT/capture_ops.log | cut -c1-250
