#!/usr/bin/env bash
# Session 54 (~9 min): SDPA's math path written out (kb-decompose) where a
# strided last dim refuses every fused kernel, its mask's add and
# _safe_softmax one kernel.
# (1) The fixture test/fixtures/models/t5_attention.py exported here (torch
# 2.11 traces SDPA; this machine's 1.13 cannot), its region through
# kb-verify: predicted accepted.
# (2) Model 33 t5_encoder (run93 5.363 ms, 0.86x compile; run96 profile:
# ~0.12 ms a layer of add/softmax/_safe_softmax kernels in eager and
# ModelNew, compile one 34 us kernel): predicted 6 regions `add ->
# _safe_softmax` verified at ~0.03 ms each (33.5 MB of scores read and
# written, the 2 MB bias from L2), ModelNew ~0.5 ms faster, ~0.95x compile.
# (3) A fresh seed (4 tasks) and model 28 timm mobilevit_s (never measured).
set -uo pipefail
source bench/next-gpu/prepare.sh
mkdir -p $OUT/fx
python3 tools/kb-export/kb_export.py test/fixtures/models/t5_attention.py -o $OUT/fx --name t5_attention > $OUT/fx/export.log 2>&1
echo "export rc $? $(( $(date +%s)-t0 ))s"; grep -c scaled_dot_product $OUT/fx/t5_attention.graph.txt
verify_fixtures verify101 60 4 $OUT/fx/t5_attention.*
timed_slice slice101 20261313 4 33,28 ${DEADLINE:-540}
for f in /tmp/kb-kernelbench/*/*/rewritten/report.md; do
  echo "== $f"; grep -E "^\| kb_" "$f" | grep -E "safe_softmax" | cut -c1-220 | head -8
done 2>/dev/null | head -40
(cd $OUT && tar czf logs101.tgz *.log)
