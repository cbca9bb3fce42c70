#!/usr/bin/env python3
"""GPU end to end (ctest label `gpu`; exit 77 without a GPU): a rewrite where
the scripted server offers a mix of kernels for a fixture's region.

    gpu_model_search.py KB_REWRITE KB_VERIFY FIXTURES

Candidates: the code generator's own kernel (correct), the same kernel with
its result negated (wrong), and one that does not compile. kb-verify must
reject the wrong one (wrong result) and the broken one (compile error) with
their reasons, accept the correct one with a time, and the selection must
keep the code generator's kernel (the accepted candidate is that very
kernel: never faster beyond timing noise).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

if shutil.which("nvidia-smi") is None or subprocess.run(
        ["nvidia-smi", "-L"], capture_output=True).returncode != 0:
    print("skipped: no GPU")
    sys.exit(77)

kb_rewrite, kb_verify, fixtures = sys.argv[1:4]
here = os.path.dirname(os.path.abspath(__file__))
work = tempfile.mkdtemp(prefix="kb-gpu-model-")
graph = os.path.join(fixtures, "graphs", "torch-1.13", "conv_epilogue_small.graph.txt")
source = os.path.join(fixtures, "models", "conv_epilogue_small.py")
subprocess.run([kb_rewrite, "rewrite", graph, "-o", os.path.join(work, "base"), "--source",
                source, "--verify", "off", "--quiet"], check=True)
with open(os.path.join(work, "base", "kernels", "kb_region_0.cu")) as f:
    good = f.read()
wrong = good.replace("o0 = ", "o0 = -", 1)
assert wrong != good, "the generated kernel has no 'o0 = ' to corrupt"
broken = good.replace("extern \"C\" __global__", "extern \"C\" __global__ this does not compile", 1)
script = {"n_mode": "native", "cases": {"void kb_region_0(": [
    {"reply": "```cuda\n" + wrong + "```"},
    {"reply": "```cuda\n" + good + "```"},
    {"reply": "```cuda\n" + broken + "```"}]},
    "default": [{"reply": "no kernel today"}]}
with open(os.path.join(work, "script.json"), "w") as f:
    json.dump(script, f)
out = os.path.join(work, "model")
r = subprocess.run([sys.executable, os.path.join(here, "with_server.py"),
                    os.path.join(work, "script.json"), "--", kb_rewrite, "rewrite", graph,
                    "-o", out, "--source", source, "--kb-verify", kb_verify,
                    "--model-url", "http://127.0.0.1:@PORT@", "--model", "scripted",
                    "--samples", "3", "--store", os.path.join(work, "store")],
                   capture_output=True, text=True)
print(r.stdout)
assert r.returncode == 0, r.stderr
verdicts = {}
for line in open(os.path.join(out, "transcript.jsonl")):
    rec = json.loads(line)
    if rec["kind"] == "verdict" and rec["region"] == "kb_region_0":
        verdicts[rec["candidate"]] = rec
    if rec["kind"] == "selection" and rec["region"] == "kb_region_0":
        selection = rec
statuses = sorted(v["status"] for v in verdicts.values())
# The negated kernel fails on values (or first on a non-finite mismatch in
# the special-value trial).
assert statuses[:2] == ["accepted", "compile_error"] and \
    statuses[2] in ("nan_mismatch", "wrong_result"), statuses
for v in verdicts.values():
    if v["status"] != "accepted":
        assert v["detail"], f"rejection without a reason: {v}"
accepted = [v for v in verdicts.values() if v["accepted"]]
assert accepted[0].get("kernel_ms"), "an accepted kernel without a time"
with open(os.path.join(out, "report.json")) as f:
    report = json.load(f)
region = next(x for x in report["regions"] if x["name"] == "kb_region_0")
base_ms = region.get("kernel_ms")
# The accepted candidate is the code generator's kernel itself: it cannot be
# faster beyond timing noise, so the code generator's kernel stays.
assert selection["candidate"] == 0, selection
assert region["origin"] == "codegen" and base_ms, region
print(f"ok: {statuses}; selection: {selection['why']}")
