#!/usr/bin/env bash
# For session 59's second call (~7 min): where levit_128's time goes in
# training mode (it runs at 0.86x torch.compile: 4.65 against 4.00 ms in
# run114), kernel time per class and the top kernels under eager,
# torch.compile and kb_rewrite.optimize (verified, regions slower than
# ATen dropped), then a fresh seed and resmlp_12 if run115 did not reach
# them. Predicted: compile's kernel total below ours by about the 0.6 ms
# of the end-to-end gap, in its fused LinearNorm batch norms (compile
# writes one kernel for statistics + normalise + hardswish where ours
# keeps 10 of them in ATen) and its attention's softmax.
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV
if fits 240; then
timeout 240 python3 bench/probes/kernel_mix.py --model 29 --train --iters 10 --top 40 \
  --json $OUT/mix116-levit.json > $OUT/mix116-levit.log 2>&1
echo "mix levit rc $? $(( $(date +%s)-t0 ))s"
python3 - $OUT/mix116-levit.json <<'PY' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("eager", "compile", "optimize"):
    v = d.get(k, {})
    print(k, v.get("total_ms"), v.get("ms_by_class"), v.get("error", ""))
PY
fi
# Seed 20261320 task 1 (conv_transpose2d -> sum(0) -> group_norm ->
# softmax(0) -> hardswish -> group_norm, 0.75x compile in run109: 1.948
# against 1.467 ms): which kernels differ. Predicted: the convolution
# itself (cuDNN's algorithm for the transposed conv), not the 680 MB sum.
if fits 90; then
python3 bench/gen_tasks.py --count 2 --seed 20261320 -o /tmp/s20 > /dev/null
KB_PROFILE_ROWS=12 timeout 90 bash scripts/gpu-profile-task /tmp/s20/1_*.py > $OUT/prof116-s20.log 2>&1
echo "prof s20 rc $? $(( $(date +%s)-t0 ))s"; grep -E "^==|Self CUDA time total|kb_region|conv|sum|Kernel|reduce" $OUT/prof116-s20.log | cut -c1-160 | head -40
fi
timed_slice slice116 20261325 2 38 ${DEADLINE:-420}
(cd $OUT && tar czf logs116.tgz *.log && rm -f *.log)
