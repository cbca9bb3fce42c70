#!/usr/bin/env bash
# Session 62's third call. Predictions:
# (1) Strided logsumexp rows of 112 and 120 ([12000, R, 32] over dim 1,
#     never measured): the online pass (default past 100) against rows in
#     registers (--thread-row-max 128). Run119 had registers 8% faster at
#     100 and online 15% faster at 128; predicted online ahead by ~5% at
#     112 and ~10% at 120.
# (2) mixer_b16's kernel mix (0.95x compile in run122, 22.05 ms against
#     21.02): predicted the GEMMs (compile's mm + Triton bias/GELU against
#     our cuBLASLt bias epilogue) hold most of the 1 ms.
# (3) resmlp_12 with fc2's epilogue back on the float4 walk (run123's
#     probe): ~5.92 ms (run122 5.945); fresh seed 20261330 (3 tasks).
set -uo pipefail
source bench/next-gpu/prepare.sh
export KB_VERIFY=$KBV
G=bench/next-gpu/graphs/tt123
if fits 80; then
timeout 80 python3 bench/probes/codegen_knobs.py --kb-rewrite $KB_REWRITE --kb-verify $KBV \
  --variants "d:;r128:--thread-row-max 128" --plan "" --json $OUT/knobs124.json \
  $G/lse_strided_112.graph.txt $G/lse_strided_120.graph.txt > $OUT/knobs124.log 2>&1
echo "knobs rc $? $(( $(date +%s)-t0 ))s"; grep -E "rejected|mismatch" $OUT/knobs124.log | cut -c1-200
grep -A4 "^graph region" $OUT/knobs124.log | cut -c1-200
fi
if fits 220; then
timeout 220 python3 bench/probes/kernel_mix.py --model 26 --iters 10 --top 30 \
  --json $OUT/mix124-mixer.json > $OUT/mix124-mixer.log 2>&1
echo "mix mixer rc $? $(( $(date +%s)-t0 ))s"
python3 - $OUT/mix124-mixer.json <<'PY' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("eager", "compile", "optimize"):
    v = d.get(k, {})
    print(k, v.get("total_ms"), v.get("ms_by_class"), v.get("error", ""))
    for row in (v.get("top") or [])[:10]:
        print("   ", row.get("ms"), row.get("launches"), row.get("class"), str(row.get("name"))[:110])
PY
fi
timed_slice slice124 20261330 3 38 ${DEADLINE:-560}
(cd $OUT && tar czf logs124.tgz *.log && rm -f *.log)
