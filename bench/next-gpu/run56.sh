#!/usr/bin/env bash
# Written in session 38, not run: the models whose concatenations are now
# fused, against their session-38 figures (ms: ShuffleNetV2 2.755,
# GoogLeNet 5.157, Inception-v3 7.959, DeepLabV3-MobileNetV3 2.511,
# ViT-B/16 earlier sessions), to see the branch cats' effect (and whether
# the speed check drops standalone cat kernels where ATen's cat is faster).
set -uo pipefail
source bench/next-gpu/prepare.sh
timed_slice slice56 20261233 0 13,17,18,25,7 575
