#!/usr/bin/env bash
# Session 44: issue 26 item 3 (float16 / bfloat16) on the GPU. (1) the
# 16-bit fixtures exported here too (torch 2.11, cuda: float16 variants
# that torch 1.13's CPU kernels cannot trace), written under $OUT/fx for
# test/fixtures/graphs/torch-2.11; (2) verify_all over them: kb-verify's
# 16-bit path (eager in the inputs' types, bounds at the format's ulp) and
# how many elements differ from eager's bits; (3) bench/python_api.py
# under torch.autocast(bfloat16) on ResNet-50 and the BERT encoder.
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV PYTHONPATH=$PWD/python KB_CACHE_DIR=/tmp/kbcache74
mkdir -p $OUT/fx /tmp/fx74
exp() { tools/kb-export/kb-export --python "$(command -v python3)" "$@" -o $OUT/fx --device cuda > /dev/null 2>&1 || echo "export failed: $*"; }
exp test/fixtures/models/half_gemm_epilogue_bf16.py --name half_gemm_epilogue_bf16 --dtype bfloat16
exp test/fixtures/models/half_gemm_epilogue_bf16.py --name half_gemm_epilogue_f16 --dtype float16
exp test/fixtures/models/basic_block_autocast.py --name basic_block_autocast --autocast bfloat16
exp test/fixtures/models/basic_block_autocast.py --name basic_block_autocast_f16 --autocast float16
exp bench/kernelbench/KernelBench/level2/9_Matmul_Subtract_Multiply_ReLU.py --name level2_9_f16 --dtype float16
cp $OUT/fx/* /tmp/fx74/
mkdir -p /tmp/fx74/t113 && cp test/fixtures/graphs/torch-1.13/{half_gemm_epilogue_bf16,basic_block_autocast}.* /tmp/fx74/t113/
echo "exported $(ls $OUT/fx | wc -l) files $(( $(date +%s)-t0 ))s"
timeout 150 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx74 > $OUT/verify74.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; cut -c1-300 $OUT/verify74.log | tail -14
timeout $(( 585 - ($(date +%s)-t0) )) python3 bench/python_api.py --models 1,10 --runs 20 --dtype bf16 \
  --json $OUT/python_api74.json > $OUT/python_api74.log 2>&1
echo "python_api rc $? $(( $(date +%s)-t0 ))s"; cut -c1-700 $OUT/python_api74.log | tail -8
