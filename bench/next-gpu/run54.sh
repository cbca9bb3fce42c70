#!/usr/bin/env bash
# Written in session 38, not run: the GPU evidence for what session 38 built
# without a GPU. (1) kb-verify's corpus (its inputs changed: bool masks,
# expanded stride-0 inputs); (2) every kernel of the fixtures whose kernels
# changed (bool_masks, cross_entropy, scalar_mask_and) verified, and
# bool_masks through ModelNew on the GPU (its guard now checks a mask's
# dtype; every region's kernel must run), rotary_cat likewise (cats fused
# into pointwise chains); (3) the models whose coverage
# changed, end to end: NF-ResNet-50 (4 regions whose anchor was not first),
# T5 encoder (6 position-bias masks), GPT-NeoX (4 linear-anchored regions).
set -uo pipefail
source bench/next-gpu/prepare.sh
timeout 120 python3 test/verify/corpus.py run $KBV > $OUT/corpus54.log 2>&1
echo "corpus rc $? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/corpus54.log | cut -c1-200
rm -rf /tmp/fx54 && mkdir -p /tmp/fx54
for c in bool_masks cross_entropy scalar_mask_and rotary_cat; do
  cp test/fixtures/graphs/torch-1.13/$c.graph.txt test/fixtures/graphs/torch-1.13/$c.params.json /tmp/fx54/ 2>/dev/null
done
# Fused concatenations in real graphs: ShuffleNetV2's channel split/shuffle,
# GoogLeNet's Inception module.
cp test/fixtures/graphs/torchvision-0.26/shufflenet_v2_x1_0.* test/fixtures/graphs/torch-2.11/level3_6_GoogleNetInceptionModule.* /tmp/fx54/ 2>/dev/null
timeout 150 python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/fx54 > $OUT/verify54.log 2>&1
echo "verify_all rc $? $(( $(date +%s)-t0 ))s"; tail -8 $OUT/verify54.log | cut -c1-200
timeout 150 python3 test/Rewrite/gpu_model_new.py $KB_REWRITE $KBV test/fixtures bool_masks rotary_cat strided_views > $OUT/modelnew54.log 2>&1
echo "gpu_model_new rc $? $(( $(date +%s)-t0 ))s"; tail -6 $OUT/modelnew54.log | cut -c1-200
timed_slice slice54 20261233 0 32,33,35 570
