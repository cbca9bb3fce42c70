#!/usr/bin/env bash
# Session 54 (~8 min): a softmax after an anchor followed by a stage over the
# same rows is one region (Group::reductions), and a whole forward's margin
# is 1% (runtime forward_choice).
# (1) Seed 20261313 task 2 (conv_transpose2d -> hardtanh -> log_softmax ->
# log_softmax; run101: two regions 0.070 + 0.048 ms, task 0.221, compile
# 0.154): predicted one region ~0.085 ms (125 MB read and written), the
# task ~0.19 ms.
# (2) Model 13 shufflenet_v2 (never measured; its last conv -> training
# batch norm -> relu -> mean is now one cross-row region) and model 37
# whisper_encoder (run96 fell back at 1.9% faster): predicted whisper's
# forward kept, ~1.02x eager.
# (3) A fresh seed (4 tasks).
set -uo pipefail
source bench/next-gpu/prepare.sh
timed_tasks sel102 120 110 20261313:2
timed_slice slice102 20261314 4 13,37 ${DEADLINE:-480}
python3 - <<'PY'
import json
d = json.load(open('/tmp/slice102.json'))
for t in d['tasks']:
    if t['set'] == 'models':
        print(t['task'], 'choice', t.get('forward_choice'), 'fallbacks', t.get('fallbacks'))
        print('  forward_ms', {k: [round(x, 3) for x in v] if isinstance(v, list) else v for k, v in (t.get('forward_ms') or {}).items()})
        for r in t['regions']:
            if 'batch_norm' in r['ops'] and 'mean' in r['ops']:
                print('  ', r['name'], r['ops'], r['status'], r.get('kernel_ms'), r.get('eager_ms'))
PY
(cd $OUT && tar czf logs102.tgz *.log)
