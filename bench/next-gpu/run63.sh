#!/usr/bin/env bash
# Session 40: (1) the corpus with the PTX check that follows a module-scope
# variable's address (good_cos_wide_args, bad_counter_in_const_table);
# (2) pooling after pooling no longer fused where the second's windows
# overlap (GoogLeNet's relu/cat -> max_pool -> max_pool regions ran 0.763 ms
# where ATen took 0.304, run62): the changed kernels verified (GoogLeNet
# 0.14, Inception-v3 0.26, L3-7), GoogLeNet and Inception-v3 timed against
# run62's 5.408 / 8.295 ms, L3-7 against its last figure; (3) seed
# 20261233's task 2, whose group_norm + cos region was refused for the math
# library's table; (4) the fresh seed 20261234 in the time left.
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 90 python3 test/verify/corpus.py run $KBV > $OUT/corpus63.log 2>&1
echo "corpus rc $? $(( $(date +%s)-t0 ))s"; grep -E "BAD|passed|entries" $OUT/corpus63.log | cut -c1-220
mkdir -p /tmp/fx63
cp test/fixtures/graphs/torchvision-0.14/googlenet.* test/fixtures/graphs/torchvision-0.26/inception_v3.* \
  test/fixtures/graphs/torch-2.11/level3_7_GoogleNetInceptionV1.* /tmp/fx63/
timeout 120 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx63 > $OUT/verify63.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; grep -v "^ok" $OUT/verify63.log | grep -v "^Exception\|^frame" | tail -6 | cut -c1-250
select_tasks 20261233:2
timeout 150 python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV --levels 3 --tasks 7 \
  "${dirs[@]}" --json $OUT/sel63.json --runs 20 --fast-math --task-timeout 90 --work /tmp/kbw63 > $OUT/sel63.log 2>&1
echo "sel rc $? $(( $(date +%s)-t0 ))s"; grep -E "True|False" $OUT/sel63.log | cut -c1-250
timed_slice slice63m 20261234 0 17,18 360
timed_slice slice63 20261234 8 "" 570
