#!/usr/bin/env bash
# Session 28, one command for all (machine starts were refused for an
# hour): the runtime's failed-capture path, the new recipes through
# kb-verify (prod; cross entropy's row kernel), three selected tasks
# (gen-20261212 task 2: its grouped convolution may run channels-last
# before the layer norm's ATen ops; task 5 with both verifier fixes,
# predicted ~0.44 ms against compile 0.452; gen-20261206 task 12, cross
# entropy decomposed, predicted ~0.11 ms against eager 0.503), then a
# fresh seed, 20261214 (8 tasks) and the LLaMA decoder (integer ops out of
# regions; a failed capture now named in cuda_graph).
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 40 python3 test/Rewrite/gpu_model_new.py $KB_REWRITE $KBV test/fixtures runtime > $OUT/gpu_model_new.log 2>&1
echo "gpu_model_new rc $? $(( $(date +%s)-t0 ))s"; grep -E "ok|Error|assert" $OUT/gpu_model_new.log | cut -c1-240 | head -5
mkdir -p /tmp/vf && cp test/fixtures/graphs/torch-1.13/{sweep_prod,cross_entropy}.* /tmp/vf/
timeout 60 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/vf > $OUT/verify_new.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; cut -c1-200 $OUT/verify_new.log
select_tasks 20261212:2 20261212:5 20261206:12
timeout 170 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 160 \
  "${dirs[@]}" --prepare 8 --json $OUT/sel.json --runs 30 --fast-math --task-timeout 110 --work /tmp/kbw15 > $OUT/sel.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|vs comp|True|False|correct" $OUT/sel.log | cut -c1-220
left=$(( 588 - ($(date +%s)-t0) ))
timeout $left scripts/gpu-bench-slice --seed 20261214 --gen 8 --models 12 --json $OUT/slice.json --runs 30 --fast-math --budget-s $(( left - 15 )) --task-timeout 110 > $OUT/slice.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|vs comp|True|False|correct" $OUT/slice.log | cut -c1-220
python3 - $OUT/sel.json $OUT/slice.json <<'PY'
import json, sys
for f in sys.argv[1:]:
    try:
        d = json.load(open(f))
    except Exception as e:
        print(f, e); continue
    for t in d["tasks"]:
        print(t["task"][:40], t.get("new_ms"), t.get("compile_ms"), json.dumps(t.get("cuda_graph"))[:400],
              json.dumps(t.get("layout"))[:200], str(t.get("error", ""))[:300])
PY
ls -la $OUT
