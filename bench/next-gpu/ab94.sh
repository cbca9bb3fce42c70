#!/usr/bin/env bash
# A/B of seed 20261307 task 2's thread-per-row norm kernel (152 registers,
# one block an SM): as generated, and with __launch_bounds__(256, 2).
KBV=/tmp/kb-verify-build/bin/kb-verify
for f in bench/next-gpu/ab94/*.json; do
  export PATH=/opt/torch/.venv/bin:$PATH; timeout 100 $KBV --job $f --no-cache | python3 -c "import json,sys; v=json.load(sys.stdin); print('$f', v['status'], v['candidate_timing'], v['eager_timing'], v.get('roofline_ms'))"
done
