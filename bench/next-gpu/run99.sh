#!/usr/bin/env bash
# Session 53 (~3 min): a kernel refused for its NaN/Inf pattern, verified
# again in ATen's order. Seed 20261311 task 2 (layer_norm -> clamp_min ->
# (v <= -0.402) + v -> silu -> adaptive_avg_pool2d -> amin; run98's slice
# 0.579 ms, its layer norm region refused: 169 elements finite where
# eager's are NaN). Predicted: the region verified in ATen's order, the
# task ~0.35 ms (its pool + amin region stays ATen's).
set -uo pipefail
source bench/next-gpu/prepare.sh
timed_tasks sel99 150 140 20261311:2
grep -h "ATen's order" /tmp/kbw-sel99/*/*/rewritten/report.md 2>/dev/null | cut -c1-300
