#!/usr/bin/env bash
# Session 28's first command. Part 0: the runtime's failed-capture path
# (test/Rewrite/gpu_model_new.py check_failed_capture: the cause recorded,
# torch's CUDA generator released). Part 1, end to end: gen-20261212 task 5
# with both verifier fixes (predicted ~0.44 ms against compile 0.452),
# gen-20261213 tasks 4 and 47 (broadcast back: ~0.015 / ~0.05 ms less),
# and the LLaMA decoder, whose failed capture is now named in the result's
# cuda_graph, and gen-20261212 task 2 (its grouped convolution may now run
# channels-last before the layer norm's ATen ops), gen-20261206 task 12 (cross
# entropy, decomposed: predicted ~0.11 ms against eager 0.503). Part 2: the layer norm over rows of 8192 in other row
# layouts (predicted ~0.15 ms in registers against 0.218 staged).
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 120 python3 test/Rewrite/gpu_model_new.py $KB_REWRITE $KBV test/fixtures silu_multi_use > $OUT/gpu_model_new.log 2>&1
echo "gpu_model_new rc $? $(( $(date +%s)-t0 ))s"; grep -E "ok|Error|assert" $OUT/gpu_model_new.log | cut -c1-240 | head
# The new recipes through kb-verify: prod (middle, last, all, split) and
# cross entropy's logsumexp row kernel.
mkdir -p /tmp/vf && cp test/fixtures/graphs/torch-1.13/{sweep_prod,cross_entropy}.* /tmp/vf/
timeout 60 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/vf > $OUT/verify_new.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; cut -c1-200 $OUT/verify_new.log
select_tasks 20261212:2 20261212:5 20261213:4 20261213:47 20261206:12
mkdir -p /tmp/rt/models && cp bench/models/12_llama_decoder.py /tmp/rt/models/
timeout 330 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --budget-s 300 \
  "${dirs[@]}" --dir /tmp/rt/models --prepare 8 --json $OUT/sel.json --runs 30 --fast-math --task-timeout 150 --work /tmp/kbw13 > $OUT/sel.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|vs comp|True|False|correct" $OUT/sel.log | cut -c1-220
python3 - $OUT/sel.json <<'PY'
import json, sys
for t in json.load(open(sys.argv[1]))["tasks"]:
    print(t["task"], t.get("new_ms"), t.get("compile_ms"), json.dumps(t.get("cuda_graph"))[:600],
          json.dumps(t.get("layout"))[:300], str(t.get("error", ""))[:300])
PY
timeout 100 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "base:--fast-math;stream:--fast-math --shared-row-max 1;stream1024:--fast-math --shared-row-max 1 --row-block 1024;reg1024:--fast-math --register-row-max 8192 --row-block 1024;reg512:--fast-math --register-row-max 8192 --row-block 512" \
  --plan "layer_norm" --json $OUT/probe-ln8192.json bench/next-gpu/graphs/gen20261212_2_ln8192.graph.txt > $OUT/probe-ln8192.log 2>&1
echo "probe rc $? $(( $(date +%s)-t0 ))s"; grep -E "accepted|rejected|failed" $OUT/probe-ln8192.log | cut -c1-200
tar czf $OUT/kbw13.tgz -C /tmp --exclude='*.so' --exclude='*.o' --exclude='*.cubin' --exclude='*.ptx' kbw13 2>/dev/null; ls -la $OUT
