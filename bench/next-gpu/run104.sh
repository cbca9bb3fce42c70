#!/usr/bin/env bash
# For the next session (~8 min): what run103 did not reach.
# (1) Model 37 whisper_encoder under the forward rule of session 54 (1%
# margin, each side's spread from its second-fastest run; run102 fell back
# with medians 1.7% apart): predicted the rewritten forward kept, ~1.02x
# eager. Model 29 timm levit_128 (never measured).
# (2) Seed 20261315 task 2's layer norm region (run103: 0.112 ms against
# ATen's 0.470, kept in ATen because rsqrt(|v| + 0.01) follows) stays in
# ATen; no prediction change, its numbers for the record with model 33
# t5_encoder again (run101: 4.748 ms, 1.00x compile).
# (3) A fresh seed (4 tasks).
# (4) Same-row softmax statistics from the held row (session 54, not run):
# fixtures row_softmax_norm and anchor_softmax_twice through kb-verify,
# predicted all accepted (the statistics' bits unchanged); seed 20261313
# task 2 now one region, predicted ~0.072 ms (run102: merged with
# statistics from memory 0.124; split 0.070 + 0.048), the task ~0.175 ms
# (0.221 split; compile 0.155).
set -uo pipefail
source bench/next-gpu/prepare.sh
verify_fixtures verify104 90 8 test/fixtures/graphs/torch-1.13/row_softmax_norm.* test/fixtures/graphs/torch-1.13/anchor_softmax_twice.*
timed_tasks sel104 120 110 20261313:2
timed_slice slice104 20261316 4 37,29,33 ${DEADLINE:-540}
python3 - <<'PY'
import json
d = json.load(open('/tmp/slice104.json'))
for t in d['tasks']:
    if t['set'] == 'models':
        print(t['task'], 'choice', t.get('forward_choice'))
        print('  forward_ms', {k: [round(x, 3) for x in v] if isinstance(v, list) else v for k, v in (t.get('forward_ms') or {}).items()})
PY
(cd $OUT && tar czf logs104.tgz *.log)
