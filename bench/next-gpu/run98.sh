#!/usr/bin/env bash
# Session 53 (~5 min): steps whose input's range holds no jump.
# Seed 20261309 task 2 (conv1d -> silu -> group_norm -> relu -> hardtanh
# -> div(trunc) -> v / v.norm(dim=0); run96 1.329 ms, compile 0.998): the
# group norm joins its region (the trunc division of [0, 0.542] by at
# least 1 is 0 everywhere). Predicted ~1.1 ms, correct at 1e-4.
# Then a fresh seed (20261311, 4 tasks).
set -uo pipefail
source bench/next-gpu/prepare.sh
timed_tasks sel98 110 100 20261309:2
timed_slice slice98 20261311 4 "" ${DEADLINE:-330}
(cd $OUT && tar czf logs98.tgz *.log)
