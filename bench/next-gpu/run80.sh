#!/usr/bin/env bash
# Session 45: channels-last through the network (a full channels-last
# region's output stays channels-last where its users take it so). run79's
# kernel mix: optimize()'s ResNet-50 spends 0.69 ms a call in cuDNN's
# NCHW<->NHWC transposes, torch.compile 0.02 ms. Prediction: the runtime now
# picks channels_last for ResNet-50 fp32 eval (same results within 1e-5 as
# run79 found), optimize() ~3.2 ms (run79: 3.83, H100), transposes < 0.1 ms.
# Then the 16-bit row kernels (autocast's layer norm and softmax): the
# fixture's two kernels verified, BERT bf16 with most of its 33 regions
# verified.
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV PYTHONPATH=$PWD/python KB_CACHE_DIR=/tmp/kbcache80
mkdir -p /tmp/fx80 && cp test/fixtures/graphs/torch-1.13/autocast_norm_softmax.* \
  test/fixtures/graphs/torch-1.13/cl_chain_eval.* /tmp/fx80/
timeout 90 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx80 > $OUT/verify80.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; cut -c1-260 $OUT/verify80.log | tail -6
timeout 120 python3 test/python/backend_gpu.py > $OUT/backend80.log 2>&1
echo "backend_gpu rc $? $(( $(date +%s)-t0 ))s"; grep -v Warn $OUT/backend80.log | tail -5 | cut -c1-200
KB_RUNTIME_VERBOSE=1 timeout 200 python3 bench/python_api.py --models 1 --runs 30 --dtype fp32 \
  --json $OUT/python_api80_fp32.json > $OUT/python_api80_fp32.log 2>&1
echo "python_api fp32 rc $? $(( $(date +%s)-t0 ))s"; grep '^{' $OUT/python_api80_fp32.log | cut -c1-1200
grep -E "kb_runtime: (layout|CUDA graph|forward|region .* guard)" $OUT/python_api80_fp32.log | cut -c1-300 | head -12
timeout 150 python3 bench/probes/kernel_mix.py --model 1 --iters 10 \
  --json $OUT/kernel_mix80.json > $OUT/kernel_mix80.log 2>&1
echo "kernel_mix rc $? $(( $(date +%s)-t0 ))s"; grep -E "^optimize" $OUT/kernel_mix80.log | cut -c1-900
KB_RUNTIME_VERBOSE=1 timeout $(( 585 - ($(date +%s)-t0) )) python3 bench/python_api.py --models 1,10 --runs 30 --dtype bf16 \
  --json $OUT/python_api80_bf16.json > $OUT/python_api80_bf16.log 2>&1
echo "python_api bf16 rc $? $(( $(date +%s)-t0 ))s"; grep '^{' $OUT/python_api80_bf16.log | cut -c1-1200
grep -E "kb_runtime: (layout|CUDA graph|forward)" $OUT/python_api80_bf16.log | cut -c1-300 | head -6
