#!/usr/bin/env bash
# Prepared in session 24 (bench/NOTES.md "What the next GPU session runs
# first"). Pack first: bash scripts/pack-kb-rewrite. The machine goes back
# after 30 s idle: have run2.sh ready before this returns.
set -uo pipefail
export PATH=/opt/torch/.venv/bin:$PATH
t0=$(date +%s)
tar xzf dist/kb-rewrite-0.1.0-linux-x86_64.tar.gz -C /tmp && export KB_REWRITE=/tmp/kb-rewrite-0.1.0/bin/kb-rewrite
KBV=/tmp/kb-verify-build/bin/kb-verify
tp="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')"
cmake -S . -B /tmp/kb-verify-build -G Ninja -DKB_ENABLE_LLVM=OFF -DKB_BUILD_VERIFY=ON -DKB_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$tp" -DKB_NLOHMANN_JSON_INCLUDE=$PWD/.carry/include > /dev/null 2>&1
cmake --build /tmp/kb-verify-build --target kb-verify > /dev/null; echo "kbv $(( $(date +%s)-t0 ))s"
K="timeout 150 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV"
# A: eval batch norm in ATen's order (kb::bn_eval), predicted 0 bits.
$K --variants "base:" --plan "" --json $OUT/probe-bneval.json test/fixtures/graphs/torch-1.13/sweep_bn_eval.graph.txt > $OUT/probeA.log 2>&1
echo "A rc $? $(( $(date +%s)-t0 ))s"; grep "bits differ" $OUT/probeA.log
# B: softmax in ATen's warp-softmax order, predicted 0 bits (then fold into the policy).
python3 bench/probes/ln_step_graphs.py --op softmax -o /tmp/sm 7x200000 100x65536+ 1000x8192 > /dev/null
python3 bench/probes/ln_step_graphs.py --op log_softmax -o /tmp/sm 33x65536 512x16384+ > /dev/null
$K --variants "base:;aten:--aten-order-norms" --plan softmax --json $OUT/probe-softmax.json /tmp/sm/*.graph.txt > $OUT/probeB.log 2>&1
echo "B rc $? $(( $(date +%s)-t0 ))s"; grep "bits differ\|best" $OUT/probeB.log; tail -6 $OUT/probeB.log
# C: chunks by bytes read: gen-20261208 task 8 (std over pooled values; old = c4) predicted 0.319 -> ~0.12 ms;
#    task 107 (group norm over pooled values; old = c1, block per row) predicted faster split;
#    task 1 logsumexp_strided (one online pass; session 24 measured 0.082 ms in two) predicted ~0.05.
$K --variants "new:;c1:--split-chunks 1;c4:--split-chunks 4" --plan "" --json $OUT/probe-gather.json test/CodeGen/Inputs/pool_std_gather.graph.txt test/CodeGen/Inputs/pool_group_norm_gather.graph.txt test/CodeGen/Inputs/logsumexp_strided.graph.txt > $OUT/probeC.log 2>&1
echo "C rc $? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/probeC.log
# C2: gen-20261204 task 13's sum over dim 0 of (11779446, 7) (lanes over 7
#     strided rows, 1024 chunks) took 368 ms in session 21 (ATen 0.70):
#     is the current plan as slow? Chunk counts as a probe.
$K --variants "base:;c64:--split-chunks 64;c256:--split-chunks 256" --plan "" --json $OUT/probe-sum7.json bench/next-gpu/graphs/sum_dim0_7cols.graph.txt > $OUT/probeC2.log 2>&1
echo "C2 rc $? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/probeC2.log
# C3: group norms a block per row whose prologue (floor_divide; div, abs,
#     xlogy) is evaluated on each of three passes (1.2 and 1.0 TB/s in
#     sessions 20-21): rows staged in shared memory evaluate it once.
#     Predicted: staged faster on both (then: stage by prologue cost).
$K --variants "base:;smem:--shared-row-max 11776" --plan group_norm --json $OUT/probe-gnsmem.json bench/next-gpu/graphs/gn_floor_divide_prologue.graph.txt bench/next-gpu/graphs/gn_xlogy_prologue.graph.txt > $OUT/probeC3.log 2>&1
echo "C3 rc $? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/probeC3.log
# D: a fresh seed and models in rotation.
timeout $(( 585 - ($(date +%s)-t0) )) bash scripts/gpu-bench-slice --seed 20261209 --gen 12 --models 2,5 --json $OUT/slice.json \
  --runs 30 --fast-math --budget-s $(( 560 - ($(date +%s)-t0) )) --task-timeout 120 --work /tmp/kbw > $OUT/slice.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^gen|^models|^coverage" $OUT/slice.log
cp $OUT/slice.json /tmp/slice-s25.json 2>/dev/null
