#!/usr/bin/env bash
# Session 45: (1) the runtime's CallGuard (one C++ pass over the call's
# tensors and the module's parameters and buffers, the CUDA graph key):
# test/python/call_guard_gpu.py (a replay follows changed, moved and
# replaced parameters); (2) ResNet-50 fp32 eval through the Python API with
# host time per call (prediction: the backend's host time ~0.7 -> ~0.25 ms,
# its CUDA-event time within 10% of optimize()'s); (3) run78.sh (the long-row
# sum's bits, the 16-bit fixtures, bf16 first-call time).
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV PYTHONPATH=$PWD/python KB_CACHE_DIR=/tmp/kbcache79
timeout 150 python3 test/python/call_guard_gpu.py > $OUT/call_guard79.log 2>&1
echo "call_guard rc $? $(( $(date +%s)-t0 ))s"; grep -v Warning $OUT/call_guard79.log | tail -12 | cut -c1-300
KB_RUNTIME_VERBOSE=1 timeout 200 python3 bench/python_api.py --models 1 --runs 30 --dtype fp32 \
  --json $OUT/python_api79_fp32.json > $OUT/python_api79_fp32.log 2>&1
echo "python_api fp32 rc $? $(( $(date +%s)-t0 ))s"; grep '^{' $OUT/python_api79_fp32.log | cut -c1-1200
grep -E "kb_runtime: (layout|CUDA graph|forward|call guard)" $OUT/python_api79_fp32.log | cut -c1-300 | head -8
timeout 150 python3 bench/probes/kernel_mix.py --model 1 --iters 10 \
  --json $OUT/kernel_mix79.json > $OUT/kernel_mix79.log 2>&1
echo "kernel_mix rc $? $(( $(date +%s)-t0 ))s"; cut -c1-1500 $OUT/kernel_mix79.log | grep -v Warn | tail -4
mkdir -p /tmp/fx78/a /tmp/fx78/b
cp test/fixtures/graphs/torch-1.13/aten_sum_rows.* test/fixtures/graphs/torch-1.13/level2_8_*.* \
   test/fixtures/graphs/torch-1.13/half_gemm_epilogue_bf16.* test/fixtures/graphs/torch-1.13/basic_block_autocast.* /tmp/fx78/a/
cp test/fixtures/graphs/torch-2.11/basic_block_autocast*.* /tmp/fx78/b/
timeout 150 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx78 > $OUT/verify79.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; cut -c1-260 $OUT/verify79.log | tail -16
timeout $(( 585 - ($(date +%s)-t0) )) python3 bench/python_api.py --models 1,10 --runs 20 --dtype bf16 \
  --json $OUT/python_api79_bf16.json > $OUT/python_api79_bf16.log 2>&1
echo "python_api bf16 rc $? $(( $(date +%s)-t0 ))s"; grep '^{' $OUT/python_api79_bf16.log | cut -c1-1200
