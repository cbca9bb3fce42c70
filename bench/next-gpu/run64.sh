#!/usr/bin/env bash
# Session 40: Inception-v3 (run63 ran out of time before it) against run62's
# 8.295 ms after the pool-after-pool change, and the fresh seed 20261234's
# first tasks.
set -uo pipefail
source bench/next-gpu/prepare.sh
timed_slice slice64 20261234 4 18 300
