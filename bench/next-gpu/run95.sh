#!/usr/bin/env bash
# Session 52's leftovers for the next session (~9 min; repack dist first).
# (1) The launch-bound A/B with jobs generated on the GPU host: seed
# 20261307 task 2's region as kb-rewrite codegen writes it there (torch
# 2.11 export, --fast-math), once with the bound and once without, and the
# job kernelbench.py verified. run94 measured the region at 0.136 ms in
# the task; session 52's A/B (jobs from torch 1.13, no --fast-math) timed
# 0.318 / 0.549 ms in kb-verify. Prediction: the host's jobs time near the
# task's (0.13-0.15 ms), the bound ~1.1x.
# (2) Layer norms in ATen's order before TF32 convolutions: models 36
# segformer and 6 convnext_tiny. Prediction: segformer's residual add +
# layer norm regions verified bit-identical (eager_mismatches 0), the model
# ~5% faster than run93's 2.604 ms (H100), coverage above 57%; convnext
# unchanged or better (its norms now fused and verified exact).
set -uo pipefail
source bench/next-gpu/prepare.sh
select_tasks 20261307:2
python3 tools/kb-export/kb_export.py /tmp/rt/20261307/2_*.py -o /tmp/ab95 --name t --device cuda > /dev/null 2>&1
$KB_REWRITE codegen /tmp/ab95/t.graph.txt -o /tmp/ab95/cg --fast-math > /dev/null 2>&1
j=/tmp/ab95/cg/kb_region_0.job.json
python3 - "$j" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j["checks"]["timing"] = True
json.dump(j, open("/tmp/ab95/bound.json", "w"))
j["candidate"]["source"] = j["candidate"]["source"].replace("__launch_bounds__(256, 2)", "__launch_bounds__(256)")
json.dump(j, open("/tmp/ab95/free.json", "w"))
PY
for f in /tmp/ab95/bound.json /tmp/ab95/free.json; do
  timeout 100 $KBV --job $f --no-cache | python3 -c "import json,sys; v=json.load(sys.stdin); print('$f', v['status'], v['candidate_timing']['median_ms'], v['eager_timing']['median_ms'])"
done
# (3) Pools whose windows overlap, staged in shared memory: every kernel
# of the fixture accepted; seed 20261306 task 1 (run93 1.802 ms, its pool
# region 0.416): predicted region ~0.25 ms, the task ~1.64 ms.
verify_fixtures verify95 60 4 test/fixtures/graphs/torch-1.13/pool_overlap_softmax.*
timed_tasks sel95 120 110 20261306:1
timed_slice slice95 20261308 0 36,6 ${DEADLINE:-575}
(cd $OUT && tar czf logs95.tgz *.log)
