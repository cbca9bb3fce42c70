#!/usr/bin/env bash
# Session 51 (~7 min; repack dist first). Nothing of session 51's code has
# run on a GPU (its GPU time went to refused starts). (1) Chains between
# the anchors of one Sequential call (issue 27): the segments test, 2 of 2
# verified; the tutorial test's 11 of 15 chains (the local generator's,
# the discriminator's with its bound 0.2) all verified; bench/cxx/vgg_block.cpp (4 chains, 3 nested) built original and
# rewritten, outputs identical; prediction eval ~1.3x (BN + ReLU after each
# of 4 convs at batch 64, 32x32 and 16x16: one pass instead of two, the
# convs' share large), training ~1.0x. (2) run90b.sh: the three fresh-seed
# losses to compile timed again, the row_softmax_norm fixture verified.
set -uo pipefail
source bench/next-gpu/prepare.sh
pids=()
rw seg91 test/Rewrite/cxx-rewrite-sequential-segments.cpp /tmp/sg91 & pids+=($!)
rw vgg91 bench/cxx/vgg_block.cpp /tmp/u91/vgg_block & pids+=($!)
rw seqt91 test/Rewrite/cxx-rewrite-sequential.cpp /tmp/sq91 & pids+=($!)
wait "${pids[@]}"
grep -hE "rewritten:|left as is" $OUT/seg91.log $OUT/vgg91.log $OUT/seqt91.log | sort | uniq -c | cut -c1-200
timeout 200 python3 bench/cxx_programs.py bench/cxx /tmp/u91 --only vgg_block --runs 50 \
  --json $OUT/cxx_programs91.json > $OUT/cxx_programs91.log 2>&1
echo "cxx_programs rc $? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/cxx_programs91.log | cut -c1-200
bash bench/next-gpu/run90b.sh
(cd $OUT && tar czf logs91.tgz *.log)
