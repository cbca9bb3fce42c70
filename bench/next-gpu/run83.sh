#!/usr/bin/env bash
# Session 47: (1) the autocast fixture through the fixed float64 truth
# (run80 rejected its layer norm region: "reference failed"); prediction:
# both regions accepted. (2) BERT bf16's graph as optimize() traces it
# (CUDA autocast), brought back with kb-rewrite codegen's reasons for its
# 33 regions not generated in run80, to reproduce them on the CPU host.
set -uo pipefail
source bench/next-gpu/prepare.sh
export PYTHONPATH=$PWD/python
mkdir -p /tmp/fx83 && cp test/fixtures/graphs/torch-1.13/autocast_norm_softmax.* /tmp/fx83/
timeout 90 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx83 > $OUT/verify83.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; cut -c1-260 $OUT/verify83.log | tail -4
timeout 120 python3 - > $OUT/export83.log 2>&1 <<'PY'
import importlib.util, os, torch
from kb_rewrite.export import export_module, write_export
spec = importlib.util.spec_from_file_location("bert", "bench/models/10_bert_encoder.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
torch.manual_seed(0)
model = m.Model().cuda().eval()
inputs = [x.cuda() for x in m.get_inputs()]
with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
    g, p = export_module(model, inputs, name="bert_bf16", device="cuda", autocast="bfloat16")
print(write_export(g, p, os.environ["OUT"] + "/bert83", "bert_bf16"))
PY
echo "export rc $? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/export83.log | cut -c1-200
timeout 120 $KB_REWRITE codegen $OUT/bert83/bert_bf16.graph.txt -o /tmp/cg83 > $OUT/bert_codegen83.log 2>&1
echo "codegen rc $? $(( $(date +%s)-t0 ))s"; grep -vE "^ *(rewritten|ok)" $OUT/bert_codegen83.log | sort | uniq -c | sort -rn | head -12 | cut -c1-250
# (3) C++ chains through a layer norm (test/Rewrite/cxx-rewrite-layer-norm.cpp:
# a literal shape with weight/bias/eps, one without, the LayerNorm module):
# prediction: 3 of 4 rewritten, all 3 verified (float statistics as ATen's,
# within 1e-5 of it).
flags="$(python3 -c 'from torch.utils.cpp_extension import include_paths as p; print(" ".join("-I" + d for d in p()))')"
timeout $(( 590 - ($(date +%s)-t0) )) $KB_REWRITE rewrite test/Rewrite/cxx-rewrite-layer-norm.cpp -o /tmp/ln83 --verify on \
  --kb-verify $KBV --verify-harness -- -std=c++17 $flags > $OUT/ln83.log 2>&1
echo "layer norm rc $? $(( $(date +%s)-t0 ))s"; grep -E "rewritten|left|error|verified|rejected" $OUT/ln83.log | cut -c1-300
