#!/usr/bin/env python3
"""Public libtorch programs this project has never seen, original against
kb-rewritten, on the GPU (issue 27: "public libtorch programs you have not
seen have their pooling/reduction chains rewritten; the rewritten sources
compile, and on the GPU host give the same outputs and are faster where
fusion applies").

    cxx_programs.py ORIG_DIR NEW_ROOT [--runs 50] [--json OUT] [--only NAME,...] [--build-only]

ORIG_DIR holds the programs' sources as published (fetch them yourself: the
origin of each is in PROGRAMS; none is part of this repository);
NEW_ROOT/<name>/ is `kb-rewrite rewrite ORIG_DIR/<source> -o NEW_ROOT/<name>`.
For each program a driver of ours (below) includes the source, builds the
module with the same seed in both builds, and then:
  * eval mode and training mode outputs agree (fp32 convolutions: TF32 off,
    as the harness compares; the TF32 difference is reported beside);
  * the median time of interleaved forward calls (CUDA events), both modes.
Exit status 1 when an output differs by more than 1e-5.
"""
import argparse
import concurrent.futures
import os
import tempfile

import torch
from torch.utils.cpp_extension import load

from cxx_rewrite import finish, time_interleaved  # one timing rule, one report

# name: where it is published, the file to rewrite, the module type and its
# constructor arguments, the input shapes (batch sizes of the programs' own
# test loops where they have one).
PROGRAMS = {
    "mnist": {"from": "pytorch/examples cpp/mnist/mnist.cpp (torch 2.x names: "
                      "Dropout2d for the removed FeatureDropout)",
              "source": "mnist.cpp", "type": "Net", "args": "",
              "inputs": [[1000, 1, 28, 28]]},
    "blitz_nnet": {"from": "prabhuomkar/pytorch-cpp tutorials/popular/blitz/"
                           "neural_networks/src/nnet.cpp + include/nnet.h",
                   "source": "nnet.cpp", "type": "NetImpl", "args": "",
                   "inputs": [[1024, 1, 32, 32]]},
    "residual_block": {"from": "prabhuomkar/pytorch-cpp tutorials/intermediate/"
                               "deep_residual_network/src/residual_block.cpp + "
                               "include/residual_block.h (BatchNorm2d and ReLU "
                               "modules: torch 2.x names)",
                       "source": "residual_block.cpp", "type": "resnet::ResidualBlockImpl",
                       "args": "64, 64", "inputs": [[64, 64, 56, 56]]},
    "convnet": {"from": "prabhuomkar/pytorch-cpp tutorials/intermediate/"
                        "convolutional_neural_network/src/convnet.cpp + "
                        "include/convnet.h (its layers are Sequential bodies)",
                "source": "convnet.cpp", "type": "ConvNetImpl", "args": "10",
                "inputs": [[100, 1, 28, 28]]},
    # Ours, in bench/cxx/ (ORIG_DIR bench/cxx): one Sequential with a chain
    # after each of its four convs, three of them between two anchors.
    "vgg_block": {"from": "bench/cxx/vgg_block.cpp (ours, not a public program)",
                  "source": "vgg_block.cpp", "type": "VggBlockImpl", "args": "",
                  "inputs": [[64, 3, 32, 32]]},
}

DRIVER = """#include <torch/extension.h>
#include "{source}"
static std::shared_ptr<{type}> net;
void init(bool train) {{
  torch::manual_seed(0);
  net = std::make_shared<{type}>({args});
  net->to(torch::kCUDA);
  net->train(train);
}}
torch::Tensor fwd(torch::Tensor x) {{ return net->forward(x); }}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {{
  m.def("init", &init);
  m.def("fwd", &fwd);
}}
"""


def loaded(job):
    """The extension of a job (name, includes, spec, work, extra sources),
    built where its driver or sources changed."""
    name, includes, _, work, extra = job
    return load(name, [os.path.join(work, name + "_driver.cpp")] + extra,
                extra_include_paths=includes, extra_cflags=["-O2", "-w"],
                extra_cuda_cflags=["-O3"], verbose=False)


def build(*job):
    name, _, spec, work, _ = job
    with open(os.path.join(work, name + "_driver.cpp"), "w") as f:
        f.write(DRIVER.format(**spec))
    loaded(job)
    return name


def builds(a, names, work):
    """Both builds of every program, compiled in parallel processes (each
    is minutes of nvcc and host compiler); loading them afterwards finds
    them built."""
    jobs = {}
    for name in names:
        new_dir = os.path.join(a.new_root, name)
        kernels = os.path.join(new_dir, "kb_kernels.cu")
        if not os.path.exists(kernels):
            print(f"{name}: no rewritten sources in {new_dir}: skipped")
            continue
        jobs[name] = [(f"kbp_{name}_orig", [a.orig], PROGRAMS[name], work, []),
                      (f"kbp_{name}_new", [new_dir, a.orig], PROGRAMS[name], work, [kernels])]
    with concurrent.futures.ProcessPoolExecutor(max_workers=2 * len(jobs) or 1) as ex:
        for f in [ex.submit(build, *j) for js in jobs.values() for j in js]:
            f.result()
    return jobs


def outputs(mod, x, train, seed=1):
    mod.init(train)
    torch.manual_seed(seed)  # dropout draws the same numbers in both builds
    with torch.no_grad():
        return mod.fwd(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("orig")
    ap.add_argument("new_root")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--json")
    ap.add_argument("--only")
    ap.add_argument("--build-only", action="store_true",
                    help="compile both builds of each program and stop (a later "
                         "run finds them built: the timing can wait for a quiet GPU)")
    a = ap.parse_args()
    names = a.only.split(",") if a.only else list(PROGRAMS)
    work = os.path.join(tempfile.gettempdir(), "kb_cxx_programs")
    os.makedirs(work, exist_ok=True)
    jobs = builds(a, names, work)
    if a.build_only:
        print(f"cxx programs: {len(jobs)} built")
        return
    ok, rows = True, []
    for name, (job_orig, job_new) in jobs.items():
        spec = PROGRAMS[name]
        orig, new = loaded(job_orig), loaded(job_new)
        torch.manual_seed(0)
        x = torch.randn(*spec["inputs"][0], device="cuda")
        row = {"program": name, "from": spec["from"], "input": spec["inputs"][0]}
        bad = False
        for train in (False, True):
            mode = "train" if train else "eval"
            tf32 = torch.backends.cudnn.allow_tf32
            row[f"{mode}_err_tf32"] = (outputs(orig, x, train) - outputs(new, x, train)).abs().max().item()
            torch.backends.cudnn.allow_tf32 = False
            err = (outputs(orig, x, train) - outputs(new, x, train)).abs().max().item()
            torch.backends.cudnn.allow_tf32 = tf32
            row[f"{mode}_err"] = err
            bad = bad or not err <= 1e-5
            orig.init(train)
            new.init(train)
            with torch.no_grad():
                t = time_interleaved({"orig": lambda: orig.fwd(x), "new": lambda: new.fwd(x)}, a.runs)
            row[f"{mode}_orig_ms"], row[f"{mode}_new_ms"] = t["orig"], t["new"]
            row[f"{mode}_speedup"] = t["orig"] / t["new"]
            print(f"{name:15s} {mode:5s} err {err:.1e} (tf32 {row[f'{mode}_err_tf32']:.1e})  "
                  f"orig {t['orig']:.3f} ms  new {t['new']:.3f} ms  x{t['orig'] / t['new']:.2f}"
                  f"{'  MISMATCH' if not err <= 1e-5 else ''}", flush=True)
        rows.append(row)
        ok = ok and not bad
    finish(a, rows, ok, "cxx programs")


if __name__ == "__main__":
    main()
