#!/usr/bin/env bash
# Session 48: a fresh seed (20261251, 6 generated tasks) and two real models
# not measured for several sessions (15 MnasNet, 29 timm LeViT-128) through
# scripts/gpu-bench-slice (--fast-math, 20 runs). Prediction: generated
# tasks all correct, ~2.5x eager and ~0.95-1.0x compile (run82: 2.54x /
# 0.95x); models ~1.4x eager, ~1.0x compile.
set -uo pipefail
source bench/next-gpu/prepare.sh
timed_slice slice85 20261251 6 15,29 585
