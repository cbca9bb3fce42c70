#!/usr/bin/env bash
# Written in session 37, not run: issue 24's 30+ real models. bench/models
# 13-37 (25 new: torchvision ShuffleNetV2, SqueezeNet, MNASNet, Swin-T,
# GoogLeNet, Inception-v3, VGG-11-BN, EfficientNetV2-S, ResNeXt-50,
# MobileNetV2, MaxViT-T, R3D-18, DeepLabV3-MobileNetV3; timm MLP-Mixer,
# PoolFormer, MobileViT, LeViT, CSPDarkNet-53, GhostNet, NF-ResNet-50;
# transformers T5 encoder, CLIP text, GPT-NeoX, SegFormer, Whisper encoder)
# were written without the host's libraries: (1) export each on the GPU
# (6 at a time; failures printed with their last words), (2) coverage over
# all of them, (3) rewrite --verify=off of each (every graph must give a
# ModelNew), (4) the graphs come back (tarball) for CPU-side work, (5) as
# many as the time left allows timed end to end, in id order.
set -uo pipefail
source bench/next-gpu/prepare.sh
# kb-verify's checks changed in session 37 (includes read as directives,
# the PTX checked for timers, malloc, printf and device launches): the
# whole corpus on the GPU first (13 good kernels must stay accepted).
timeout 240 python3 test/verify/corpus.py run $KBV > $OUT/corpus51.log 2>&1
echo "corpus rc $? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/corpus51.log | cut -c1-200
rm -rf /tmp/m37 /tmp/m37rw && mkdir -p /tmp/m37 /tmp/m37rw
ls bench/models/{1[3-9],2[0-9],3[0-7]}_*.py | xargs -P 6 -I{} bash -c 'n=$(basename {} .py); timeout 300 python3 tools/kb-export/kb_export.py {} -o /tmp/m37 --name $n --device cuda > /tmp/m37/$n.log 2>&1 || echo "export FAIL $n: $(tail -c 400 /tmp/m37/$n.log | tr "\n" " ")"'
echo "export $(ls /tmp/m37/*.graph.txt | wc -l) graphs $(( $(date +%s)-t0 ))s"
$KB_REWRITE analyze --coverage /tmp/m37 > $OUT/cov51.txt 2>&1; head -45 $OUT/cov51.txt | cut -c1-200
for g in /tmp/m37/*.graph.txt; do n=$(basename $g .graph.txt)
  timeout 120 $KB_REWRITE rewrite $g -o /tmp/m37rw/$n --verify=off --quiet > /tmp/m37/$n.rw.log 2>&1 || echo "rewrite FAIL $n: $(tail -c 300 /tmp/m37/$n.rw.log | tr "\n" " ")"
done
echo "rewrites $(( $(date +%s)-t0 ))s"
tar czf $OUT/models37.tar.gz -C /tmp/m37 $(cd /tmp/m37 && ls *.graph.txt *.params.json) && ls -la $OUT/models37.tar.gz
left=$(( 575 - ($(date +%s)-t0) ))  # after the corpus, exports and rewrites
timeout $left bash scripts/gpu-bench-slice --seed 20261232 --gen 0 --models 13,14,15,16,17,18,19,20,21,22 \
  --json /tmp/slice51.json --runs 20 --fast-math \
  --budget-s $(( left - 15 )) --task-timeout 150 > $OUT/slice51.log 2>&1
echo "slice rc $? $(( $(date +%s)-t0 ))s"; grep -E "^\[|geomean" $OUT/slice51.log | tail -14 | cut -c1-250
cp /tmp/slice51.json $OUT/ 2>/dev/null
