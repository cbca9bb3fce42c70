#!/usr/bin/env bash
# Written in session 38, not run: the models not yet timed correct (GhostNet
# with its functional dropout off, Whisper with its decoder heads fixed),
# CLIP text (its causal mask), and a fresh seed (20261233, 6 generated
# tasks).
set -uo pipefail
source bench/next-gpu/prepare.sh
timed_slice slice55 20261233 6 31,34,37 575
