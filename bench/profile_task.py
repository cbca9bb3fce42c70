"""Kernel-level profile of one task: eager vs ModelNew vs torch.compile
(scripts/gpu-profile-task)."""
import importlib.util, os, sys, torch
from torch.profiler import profile, ProfilerActivity
d = sys.argv[1]; task = sys.argv[2]
def load(p, n):
    s = importlib.util.spec_from_file_location(n, p); m = importlib.util.module_from_spec(s)
    sys.modules[n] = m; s.loader.exec_module(m); return m
t = load(task, "task"); new = load(os.path.join(d, "model_new.py"), "mn")
init = t.get_init_inputs()
torch.manual_seed(0); ref = t.Model(*init).cuda()
torch.manual_seed(0); got = new.ModelNew(*init).cuda()
with torch.device("cuda"):
    x = t.get_inputs()
with torch.no_grad():
    for _ in range(3):
        ref(*x); got(*x)
    torch.cuda.synchronize()
    print("layout", got._kb.layout_ms, "graph", got._kb.graphs and got._kb.graphs.timing, flush=True)
    comp = torch.compile(ref)
    for _ in range(3):
        comp(*x)
    torch.cuda.synchronize()
    for name, f in (("eager", ref), ("new", got), ("compile", comp)):
        with profile(activities=[ProfilerActivity.CUDA]) as p:
            for _ in range(3):
                f(*x)
            torch.cuda.synchronize()
        print("==", name)
        print(p.key_averages().table(sort_by="cuda_time_total", row_limit=int(os.environ.get("KB_PROFILE_ROWS", "10")), max_name_column_width=90), flush=True)
