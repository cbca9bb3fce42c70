#!/usr/bin/env bash
# Session 25's last command: probes, then a fresh seed and two models.
# At most 8 files come back from $OUT: the logs travel in one tarball.
set -uo pipefail
export PATH=/opt/torch/.venv/bin:$PATH
t0=$(date +%s)
tar xzf dist/kb-rewrite-0.1.0-linux-x86_64.tar.gz -C /tmp && export KB_REWRITE=/tmp/kb-rewrite-0.1.0/bin/kb-rewrite
KBV=/tmp/kb-verify-build/bin/kb-verify
tp="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')"
cmake -S . -B /tmp/kb-verify-build -G Ninja -DKB_ENABLE_LLVM=OFF -DKB_BUILD_VERIFY=ON -DKB_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$tp" -DKB_NLOHMANN_JSON_INCLUDE=$PWD/.carry/include > /dev/null 2>&1
cmake --build /tmp/kb-verify-build --target kb-verify > /dev/null; echo "kbv $(( $(date +%s)-t0 ))s"
K="timeout 100 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV"
mkdir -p $OUT/logs /tmp/cg
# E: a lone group norm over rows of 114688 (gen-20261208 task 0: 0.893 ms,
#    compile 0.686): 512 threads, or rows split over 4 / 16 blocks.
$K --variants "base:;rb512:--row-block 512;c4:--split-chunks 4;c16:--split-chunks 16" --plan "" --json $OUT/logs/probe-gnlone.json \
  bench/next-gpu/graphs/gn_lone_2048x114688.graph.txt > $OUT/logs/probeE.log 2>&1
echo "E rc $? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/logs/probeE.log
# C again: gathers by bytes read, the meta device of the export replaced.
for f in test/CodeGen/Inputs/pool_std_gather test/CodeGen/Inputs/pool_group_norm_gather test/CodeGen/Inputs/logsumexp_strided bench/next-gpu/graphs/gn_floor_divide_prologue; do
  sed 's/value="meta"/value="cuda"/' $f.graph.txt > /tmp/cg/$(basename $f).graph.txt; done
$K --variants "new:;c1:--split-chunks 1;c4:--split-chunks 4" --plan "" --json $OUT/logs/probe-gather.json \
  /tmp/cg/pool_std_gather.graph.txt /tmp/cg/pool_group_norm_gather.graph.txt /tmp/cg/logsumexp_strided.graph.txt > $OUT/logs/probeC.log 2>&1
echo "C rc $? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/logs/probeC.log
$K --variants "base:;smem:--shared-row-max 11776" --plan group_norm --json $OUT/logs/probe-gnfd.json /tmp/cg/gn_floor_divide_prologue.graph.txt > $OUT/logs/probeF.log 2>&1
echo "F rc $? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/logs/probeF.log
# D: a fresh seed (20261209's results were lost in session 25's first
# command: 8 files come back at most) and models 2, 5.
timeout $(( 575 - ($(date +%s)-t0) )) bash scripts/gpu-bench-slice --seed 20261209 --gen 8 --models 2,5 --json $OUT/slice.json \
  --runs 30 --fast-math --budget-s $(( 520 - ($(date +%s)-t0) )) --task-timeout 110 --work /tmp/kbw > $OUT/logs/slice.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^gen|^models|^coverage|^\[" $OUT/logs/slice.log | cut -c1-160
tar czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
