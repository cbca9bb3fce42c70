#!/usr/bin/env bash
# Session 47: a fresh seed (20261238, 6 generated tasks) and two real
# models through scripts/gpu-bench-slice (--fast-math, 20 runs), the
# session's measurement on what was never tuned on.
set -uo pipefail
source bench/next-gpu/prepare.sh
timed_slice slice82 20261238 6 3,8 585
