"""Probe: where a grid-synchronised split kernel's time goes.

For each kb-verify job (a split row kernel with grid_sync), builds a
stand-alone driver around its source and times back-to-back cooperative
launches (CUDA events over 200 launches, L2 warm, the workspace zeroed
once: the barrier resets its count itself) under variants of the source:

  base      as generated
  nosync    every kb_grid_sync(ws) replaced by __syncthreads() (results
            wrong; the time without grid barriers)
  fitgrid   the grid cut to the kernel's items (the launch rule's
            sm_count * perSM otherwise)
  bare      an empty kernel of the same grid and block with the same
            number of grid barriers (the barriers' own cost)
  timeline  as generated, each block's thread 0 recording the global
            timer at its start, around each grid barrier and at its end;
            printed per mark as the earliest..latest block (us)
  memset    as generated, the whole workspace zeroed before each launch
            (as kb-verify's timed launch and the runtime do; the other
            variants zero it once)

  python3 bench/probes/split_phases.py JOB.job.json...

Needs nvcc and a GPU; prints one line per job and variant (microseconds).
KB_PHASES_KEEP=DIR keeps each driver (N_JOB_ENTRY_VARIANT) there.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

DRIVER = r'''
#include <algorithm>
#include <cstdio>
using std::min;
#include <cuda_runtime.h>
%(source)s
%(bare)s
int main() {
  int dev = 0, sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  size_t sizes[] = {%(sizes)s 0};
  const int n = %(nargs)d;
  void* bufs[32];
  for (int i = 0; i < n; ++i) {
    cudaMalloc(&bufs[i], sizes[i] * 4);
    cudaMemset(bufs[i], 0, sizes[i] * 4);
  }
  void* ws;
  cudaMalloc(&ws, %(ws)d + 16);
  cudaMemset(ws, 0, %(ws)d + 16);
  void* args[33];
  for (int i = 0; i < n; ++i) args[i] = &bufs[i];
  args[n] = &ws;
  int grid = %(grid)s;
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  for (int rep = 0; rep < 2; ++rep) {
    cudaEventRecord(s);
    for (int i = 0; i < 200; ++i) {
      %(memset)s
      cudaLaunchCooperativeKernel((const void*)%(entry)s, dim3(grid), dim3(%(block)d), args, 0, 0);
    }
    cudaEventRecord(e);
    cudaEventSynchronize(e);
  }
  float ms;
  cudaEventElapsedTime(&ms, s, e);
  cudaError_t err = cudaGetLastError();
  printf("%%.2f us grid %%d %%s\n", ms * 1000 / 200, grid, cudaGetErrorString(err));
%(post)s
  return 0;
}
'''

# The timeline variant: each block's thread 0 records the global timer at
# the kernel's start, before and after each grid barrier, and at its end
# (the last launch's; thread 0 marks when its warp gets there), and the
# driver prints, per mark, the earliest and latest block relative to the
# earliest start (us).
TIMELINE_DEFS = r'''
__device__ unsigned long long kb_tl_buf[4096 * 16];
__device__ __forceinline__ void kb_tl(int k) {
  if (threadIdx.x == 0) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    kb_tl_buf[blockIdx.x * 16 + k] = t;
  }
}
'''

TIMELINE_POST = r'''
  {
    static unsigned long long h[4096 * 16];
    cudaMemcpyFromSymbol(h, kb_tl_buf, sizeof(h));
    const int marks = %(marks)d;
    unsigned long long t0 = ~0ull;
    for (int b = 0; b < grid; ++b) t0 = h[b * 16] < t0 ? h[b * 16] : t0;
    printf("timeline (us from the first block's start; earliest..latest block):");
    for (int k = 0; k < marks; ++k) {
      unsigned long long lo = ~0ull, hi = 0;
      for (int b = 0; b < grid; ++b) {
        unsigned long long v = h[b * 16 + k];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
      }
      printf(" %%s %%.2f..%%.2f", k == 0 ? "start" : k == marks - 1 ? "end"
             : k %% 2 ? "barrier-in" : "barrier-out",
             (lo - t0) / 1000.0, (hi - t0) / 1000.0);
    }
    printf("\n");
  }
'''


def timeline_source(src, entry, syncs):
    """The kernel with kb_tl marks: 0 at its start, 2n+1 / 2n+2 around
    its n-th grid barrier, 2 * syncs + 1 at its end (its last brace)."""
    head = re.search(r"\b%s\([^)]*\)\s*\{" % re.escape(entry), src)
    if not head or 2 * syncs + 2 > 16:
        return None
    n = [0]

    def mark(m):
        k = 2 * n[0] + 1
        n[0] += 1
        return "%skb_tl(%d); kb_grid_sync(ws); kb_tl(%d);" % (
            m.group(1), k, k + 1)
    body = src[head.end():]
    body = re.sub(r"^(\s*)kb_grid_sync\(ws\);", mark, body, flags=re.M)
    end = body.rindex("}")
    return (TIMELINE_DEFS + src[:head.end()] + " kb_tl(0);" + body[:end] +
            "  kb_tl(%d);\n" % (2 * syncs + 1) + body[end:])


BARE = r'''
extern "C" __global__ void __launch_bounds__(%(block)d) kb_bare(unsigned int* ws) {
  for (int k = 0; k < %(syncs)d; ++k) kb_grid_sync(ws);
}
'''


def items_of(source):
    m = re.findall(r"item < (\d+)LL", source)
    return int(m[0]) if m else None


def main():
    # KB_PHASES_KEEP=DIR keeps the drivers there (to run under ncu).
    work = os.environ.get("KB_PHASES_KEEP") or tempfile.mkdtemp()
    os.makedirs(work, exist_ok=True)
    builds = []  # (job, variant, items, barriers, exe, compile process)
    # Jobs of different folders share names (kb_region_0.job.json): each
    # build is named by its place on the command line too.
    for nth, path in enumerate(sys.argv[1:]):
        job = json.load(open(path))
        c = job["candidate"]
        src = c["source"]
        sizes = []
        for a in c["args"]:
            if "tensor" in a:
                t = next(t for t in job["inputs"] + job["outputs"]
                         if t["name"] == a["tensor"])
                n = 1
                for d in t["shape"]:
                    n *= d
                sizes.append(str(n))
        block = int(c["launch"]["block"][0])
        grid = c["launch"]["grid"][0].replace("sm_count", "sms")
        ws = int(c["launch"]["workspace_bytes"])
        syncs = len(re.findall(r"^\s*kb_grid_sync\(ws\);", src, re.M))
        items = items_of(src)
        variants = {
            "base": (src, grid, c["entry"], ""),
            "memset": (src, grid, c["entry"], ""),
            "nosync": (re.sub(r"^(\s*)kb_grid_sync\(ws\);",
                              r"\1__syncthreads();", src, flags=re.M),
                       grid, c["entry"], ""),
            "bare": (src, grid, "kb_bare",
                     BARE % {"block": block, "syncs": syncs}),
        }
        if items:
            variants["fitgrid"] = (src, "min(%s, %d)" % (grid, items),
                                   c["entry"], "")
        tl = timeline_source(src, c["entry"], syncs)
        if tl:
            variants["timeline"] = (tl, grid, c["entry"], "")
        for name, (s, g, entry, bare) in variants.items():
            cu = os.path.join(work, "%d_%s_%s_%s.cu" % (
                nth, os.path.basename(path).split(".")[0], c["entry"], name))
            exe = cu[:-3]
            sz = [] if entry == "kb_bare" else list(sizes)
            with open(cu, "w") as f:
                f.write(DRIVER % {"source": s, "bare": bare,
                                  "sizes": "".join(x + ", " for x in sz),
                                  "nargs": len(sz), "ws": ws, "grid": g,
                                  "entry": entry, "block": block,
                                  "memset": "cudaMemsetAsync(ws, 0, %d + 16, 0);"
                                  % ws if name == "memset" else "",
                                  "post": TIMELINE_POST % {
                                      "marks": 2 * syncs + 2}
                                  if name == "timeline" else ""})
            p = subprocess.Popen(["nvcc", "-O3", "-arch=sm_90", "-o", exe, cu],
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
            builds.append((path, name, items, syncs, exe, p))
    for path, name, items, syncs, exe, p in builds:
        out = p.communicate()[0]
        if p.returncode:
            print(path, name, "compile failed", out[-300:])
            continue
        r = subprocess.run([exe], capture_output=True, text=True, timeout=60)
        print("%s %-8s %s (items %s, barriers %d)" % (
            path, name, r.stdout.strip(), items, syncs),
            flush=True)


if __name__ == "__main__":
    main()
