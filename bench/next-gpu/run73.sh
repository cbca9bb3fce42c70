#!/usr/bin/env bash
# Written in session 43 (no GPU was lent), not run: issue 26 on the GPU.
# (1) verify_all over basic_block_eval (eval-mode batch norms fused after
# convolutions, their channels-last variants reading through permutes);
# (2) test/python/backend_gpu.py: optimize() and torch.compile(backend=
# "kb_rewrite") on that block, correct at 1e-4, kernels verified, cached;
# (3) bench/python_api.py on ResNet-50 and the BERT encoder in eval mode,
# fp32: eager, torch.compile, optimize(), the backend (ms, time to first
# call, extra GPU memory). Predicted in bench/NOTES.md ("Session 43").
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV PYTHONPATH=$PWD/python KB_CACHE_DIR=/tmp/kbcache73
mkdir -p /tmp/fx73 && cp test/fixtures/graphs/torch-1.13/basic_block_eval.* /tmp/fx73/
timeout 100 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx73 > $OUT/verify73.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify73.log | tail -6 | cut -c1-250
timeout 200 python3 test/python/backend_gpu.py > $OUT/backend73.log 2>&1
echo "backend rc $? $(( $(date +%s)-t0 ))s"; tail -8 $OUT/backend73.log | cut -c1-300
timeout $(( 580 - ($(date +%s)-t0) )) python3 bench/python_api.py --models 1,10 --runs 20 \
  --json $OUT/python_api73.json > $OUT/python_api73.log 2>&1
echo "python_api rc $? $(( $(date +%s)-t0 ))s"; cut -c1-600 $OUT/python_api73.log | tail -6
