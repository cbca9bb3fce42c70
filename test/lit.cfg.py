# lit configuration for kb-rewrite.
import os
import shutil
import subprocess

import lit.formats

config.name = "kb-rewrite"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".txt", ".test", ".cpp"]
config.excludes = ["fixtures", "Inputs", "verify", "CMakeLists.txt", "lit.cfg.py",
                   "check_model_new.py", "runtime_test.py", "gpu_model_new.py", "rewrite_all.py", "with_server.py", "only_chain_lines.py", "gpu_model_search.py", "paper_experiment.py",
                   "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kb_obj_root, "test")

config.environment["PATH"] = os.pathsep.join(
    [config.kb_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%kb_src", config.kb_src_root))
config.substitutions.append(("%kb_build", config.kb_obj_root))
config.substitutions.append(("%kb_tools", config.kb_tools_dir))
config.substitutions.append(("%fixtures", os.path.join(config.kb_src_root, "test", "fixtures")))
config.substitutions.append(("%python", config.kb_python))
config.substitutions.append(("%kb_export",
                             os.path.join(config.kb_src_root, "tools", "kb-export", "kb-export")
                             + " --python " + config.kb_python))


def _works(cmd):
    try:
        return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


# GPU tests run only where a GPU answers; elsewhere lit reports them UNSUPPORTED.
if shutil.which("nvidia-smi") and _works(["nvidia-smi", "-L"]):
    config.available_features.add("gpu")
if _works([config.kb_python, "-c", "import torch"]):
    config.available_features.add("torch")
# torch.compile backends need dynamo (torch >= 2.0; Debian 12 has 1.13).
if _works([config.kb_python, "-c", "import torch._dynamo"]):
    config.available_features.add("dynamo")

if os.path.exists(os.path.join(config.kb_tools_dir, "kb-verify")):
    config.available_features.add("kb-verify")

# The C++ frontend's tests parse real libtorch sources (Debian's libtorch-dev).
_torch_cxx = "/usr/include/torch/csrc/api/include"
if os.path.exists(os.path.join(_torch_cxx, "torch", "torch.h")):
    config.available_features.add("libtorch")
config.substitutions.append(("%torch_cxx_flags", f"-std=c++17 -I{_torch_cxx}"))
# ... and link against its libraries (Debian's libtorch1.13), to run
# helpers of the generated header on the CPU.
if "libtorch" in config.available_features and os.path.exists(
        "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so"):
    config.available_features.add("libtorch-link")
config.substitutions.append(("%torch_link_flags", "-ltorch -ltorch_cpu -lc10"))

# Generated CUDA sources with torch headers compile with nvcc where present.
_nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
if os.path.exists(_nvcc):
    config.available_features.add("nvcc")
config.substitutions.append(("%nvcc", _nvcc))

# The Clang plugin runs inside the clang it was built against.
_plugin = os.path.join(config.kb_obj_root, "lib", "KbRewrite.so")
_clangxx = os.path.join(config.llvm_tools_dir, "clang++")
if os.path.exists(_plugin) and os.path.exists(_clangxx):
    config.available_features.add("clang-plugin")
config.substitutions.append(("%kb_plugin", _plugin))
config.substitutions.append(("%clangxx", _clangxx))
