"""Rewrites a fixture under a hostile graph file name and params.json name
(a docstring terminator and code, quotes, a backslash, a newline, a control
character, a byte that is not UTF-8) and reports what model_new.py holds,
read with ast, then imports it.

usage: hostile_names.py KB_REWRITE FIXTURE_STEM MODEL_PY WORKDIR
"""
import ast
import json
import os
import shutil
import subprocess
import sys

kbr, stem, model, work = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
evil_file = b'g"""; import os; os.system("touch PWNED") #\\ \xff'
evil_name = 'n"""\nimport os; os.system("touch PWNED2")\x01 \\'
graph = os.path.join(os.fsencode(work), evil_file + b".graph.txt")
shutil.copy(stem + ".graph.txt", graph)
params = json.load(open(stem + ".params.json"))
params["name"] = evil_name
with open(os.path.join(os.fsencode(work), evil_file + b".params.json"), "w") as f:
    json.dump(params, f)
out = os.path.join(work, "out")
r = subprocess.run([kbr, "rewrite", graph, "-o", out, "--verify", "off",
                    "--quiet", "--source", model], capture_output=True)
print("rewrite exit", r.returncode)
src = open(os.path.join(out, "model_new.py"), encoding="utf-8").read()
tree = ast.parse(src)
doc = ast.get_docstring(tree)
print("docstring names the file:", os.fsdecode(evil_file) in doc)
print("docstring names the model:", evil_name in doc)
calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
         and isinstance(n.func, ast.Attribute) and n.func.attr == "system"]
print("os.system calls:", len(calls))
for node in tree.body:
    if isinstance(node, ast.Assign) and node.targets[0].id == "_KB_DIR":
        print("_KB_DIR round-trips:", os.fsencode(node.value.value) ==
              os.fsencode(os.path.abspath(out)))
    if isinstance(node, ast.Assign) and node.targets[0].id == "_original":
        # "kb_original_" + NAME.replace("-", "_")
        name = node.value.args[0].right.func.value
        print("module name:", name.value == evil_name)
# Imported in a fresh interpreter in WORKDIR: an injected os.system would
# create PWNED or PWNED2 there.
r = subprocess.run([sys.executable, "-c",
                    "import importlib.util, sys\n"
                    "spec = importlib.util.spec_from_file_location("
                    "'m', sys.argv[1])\n"
                    "spec.loader.exec_module(importlib.util.module_from_spec(spec))\n",
                    os.path.join(out, "model_new.py")], cwd=work,
                   capture_output=True, text=True)
print("import exit", r.returncode, r.stderr[-300:])
print("created by the import:", [p for p in os.listdir(work)
                                 if p in ("PWNED", "PWNED2")])
