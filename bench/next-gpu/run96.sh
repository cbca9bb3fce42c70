#!/usr/bin/env bash
# Session 53: where the real models' gaps to torch.compile are (~9 min).
# (1) Kernel profiles (torch.profiler, eager / ModelNew / compile, kernels
# unverified and all used) of model 33 t5_encoder (0.86x compile in run93),
# model 32 timm nf_resnet50 (0.83x in run88) and seed 20261251 task 1 (one
# cooperative kernel at 0.746 ms against ~0.25 for its three passes).
# (2) A fresh seed and a model never measured (37 whisper_encoder).
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_PROFILE_ROWS=30
for m in 33_t5_encoder 32_timm_nf_resnet50; do
  timeout 170 bash scripts/gpu-profile-task bench/models/$m.py > $OUT/prof96_$m.log 2>&1
  echo "$m rc $? $(( $(date +%s)-t0 ))s"
done
select_tasks 20261251:1
KB_PROFILE_ROWS=8 timeout 90 bash scripts/gpu-profile-task /tmp/rt/20261251/1_*.py > $OUT/prof96_51.log 2>&1
echo "51 rc $? $(( $(date +%s)-t0 ))s"
timed_slice slice96 20261309 4 37 ${DEADLINE:-575}
(cd $OUT && tar czf logs96.tgz *.log)
