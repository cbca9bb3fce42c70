#!/usr/bin/env bash
# Session 44, after run74: (1) the 16-bit fixtures exported on the GPU
# host (torch 2.11, cuda; float16 ones torch 1.13's CPU cannot trace),
# under $OUT/fx, verified with verify_all together with basic_block_eval;
# (2) run73's issue 26 checks in fp32: test/python/backend_gpu.py and
# bench/python_api.py on ResNet-50 / BERT in eval mode.
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV PYTHONPATH=$PWD/python KB_CACHE_DIR=/tmp/kbcache75
mkdir -p $OUT/fx /tmp/fx75
exp() { tools/kb-export/kb-export --python "$(command -v python3)" "$@" -o $OUT/fx --device cuda > /tmp/exp.log 2>&1 || { echo "export failed: $*"; tail -2 /tmp/exp.log; }; }
exp test/fixtures/models/half_gemm_epilogue_bf16.py --name half_gemm_epilogue_bf16 --dtype bfloat16
exp test/fixtures/models/half_gemm_epilogue_bf16.py --name half_gemm_epilogue_f16 --dtype float16
exp test/fixtures/models/basic_block_autocast.py --name basic_block_autocast --autocast bfloat16
exp test/fixtures/models/basic_block_autocast.py --name basic_block_autocast_f16 --autocast float16
exp bench/kernelbench/KernelBench/level2/9_Matmul_Subtract_Multiply_ReLU.py --name level2_9_f16 --dtype float16
cp $OUT/fx/* /tmp/fx75/ && cp test/fixtures/graphs/torch-1.13/basic_block_eval.* /tmp/fx75/
echo "exported $(ls $OUT/fx | wc -l) files $(( $(date +%s)-t0 ))s"
timeout 150 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx75 > $OUT/verify75.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; cut -c1-300 $OUT/verify75.log | tail -16
timeout 200 python3 test/python/backend_gpu.py > $OUT/backend75.log 2>&1
echo "backend rc $? $(( $(date +%s)-t0 ))s"; tail -6 $OUT/backend75.log | cut -c1-300
timeout $(( 585 - ($(date +%s)-t0) )) python3 bench/python_api.py --models 1,10 --runs 20 \
  --json $OUT/python_api75.json > $OUT/python_api75.log 2>&1
echo "python_api rc $? $(( $(date +%s)-t0 ))s"; grep '^{' $OUT/python_api75.log | cut -c1-900
