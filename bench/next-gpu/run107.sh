#!/usr/bin/env bash
# Session 55: a split batch norm's fixed cost. run106's profile (kernel
# times, L2 warm): levit's BatchNorm1d -> hardswish regions 23-60 us each
# (1.5 MB: 23.7 us; 6.4 MB: 41.8 us), ATen's three kernels 22 us on
# average, inductor's two 15. bench/probes/split_phases.py times the
# kernels back to back with and without their grid barriers, on a grid
# cut to their items, and the barriers alone. Predicted: the barriers are
# most of the floor (a kernel of 1.5 MB at bandwidth is ~1 us).
set -uo pipefail
source bench/next-gpu/prepare.sh
$KB_REWRITE codegen bench/next-gpu/graphs/bn105/levit_bn.graph.txt -o /tmp/lb > /dev/null
timeout 240 python3 bench/probes/split_phases.py /tmp/lb/kb_region_0.job.json /tmp/lb/kb_region_3.job.json /tmp/lb/kb_region_5.job.json 2>&1 | tee $OUT/phases107.log
echo "rc $? $(( $(date +%s)-t0 ))s"
