#!/usr/bin/env bash
# Session 62's first call. Predictions:
# (1) addcmul on torch 2.11: value 1 gives fma(t1, t2, self) (one rounding,
#     pytorch#172750), value 0.5 gives fma(0.5, round(t1 * t2), self);
#     kb::addcmul follows with KB_TORCH_VERSION = 211.
# (2) kb-verify on the new fixtures (mixer_transposed: 7 regions, 4 tiled;
#     mixer_residual_transposed: its tiled add; addcmul_addcdiv;
#     mixed_output_layouts): all accepted, pointwise ones bit-exact.
# (3) gpu_model_new on mixer_transposed: the ModelNew passes.
# (4) resmlp_12 (model 38; run118 6.65 ms vs compile 6.04, 0.91x on the
#     H100) and mixer_b16 (26): addcmul now fuses (25 ATen addcmul
#     launches, 0.21 ms), fc1 reads a row-major Affine output (the 12
#     direct_copy kernels, 0.24 ms, gone) and the residual regions run in
#     tiles. Predicted resmlp_12 ~5.95 ms, at or just above compile.
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV
python3 - <<'PY'
import torch
torch.manual_seed(0)
s, a, b = (torch.randn(1 << 20, device="cuda") for _ in range(3))
d = lambda t: t.double()
for v in (1.0, 0.5):
    got = torch.addcmul(s, a, b, value=v)
    one = (d(s) + v * d(a) * d(b)).float() if v == 1.0 else None
    two = (d(s) + v * d((a * b))).float()
    fma1 = (d(s) + d(a) * d(b)).float()
    print(f"addcmul value {v}: differs from round(s + v*round(a*b)) at {(got != two).sum().item()}, "
          f"from one fma(a, b, s) at {(got != fma1).sum().item()} of {got.numel()}")
print("torch", torch.__version__)
PY
if fits 120; then
verify_fixtures vf122 110 14 test/fixtures/graphs/torch-1.13/mixer_transposed.* \
  test/fixtures/graphs/torch-1.13/mixer_residual_transposed.* \
  test/CodeGen/Inputs/addcmul_addcdiv.graph.txt test/CodeGen/Inputs/mixed_output_layouts.graph.txt
fi
if fits 90; then
timeout 90 python3 test/Rewrite/gpu_model_new.py $KB_REWRITE $KBV test/fixtures mixer_transposed > $OUT/gmn122.log 2>&1
echo "gpu_model_new rc $? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/gmn122.log | cut -c1-200
fi
timed_slice slice122 20261329 0 38,26 ${DEADLINE:-560}
(cd $OUT && tar czf logs122.tgz *.log && rm -f *.log)
