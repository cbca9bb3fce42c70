#!/usr/bin/env bash
# Session 54 (~7 min): the forward rule (1% margin, the spread from the
# second-fastest run) on whisper_encoder (model 37; run102: medians 1.7%
# apart, fell back): predicted kept, ~1.02x eager. A fresh seed (4 tasks)
# and model 29 timm levit_128 (never measured).
set -uo pipefail
source bench/next-gpu/prepare.sh
timed_slice slice103 20261315 4 29,37 ${DEADLINE:-450}
python3 - <<'PY'
import json
d = json.load(open('/tmp/slice103.json'))
for t in d['tasks']:
    if t['set'] == 'models':
        print(t['task'], 'choice', t.get('forward_choice'))
        print('  forward_ms', {k: [round(x, 3) for x in v] if isinstance(v, list) else v for k, v in (t.get('forward_ms') or {}).items()})
PY
(cd $OUT && tar czf logs103.tgz *.log)
