#!/usr/bin/env bash
# Session 52, after run93 (~3 min; what the budget leaves): the launch
# bound of thread-held rows of 32-96 floats (two blocks an SM) end to end.
# Seed 20261307 task 2 (conv1d -> ... -> v / v.norm(dim=0) ...; run93
# 0.224 ms, compile 0.176, its region 0.150): predicted region ~0.09 ms,
# the task ~0.165 ms (~1.07x compile).
set -uo pipefail
source bench/next-gpu/prepare.sh
timed_tasks sel94 100 90 20261307:2
