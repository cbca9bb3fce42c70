# Sourced by the bench/next-gpu commands on the GPU host: unpacks the
# carried static kb-rewrite (scripts/pack-kb-rewrite) and builds kb-verify
# against the host's libtorch. Sets KB_REWRITE, KBV and t0.
export PATH=/opt/torch/.venv/bin:$PATH
t0=$(date +%s)
# Unpacked again whenever the carried tarball changed (a warm host keeps
# /tmp between calls).
sum="$(sha256sum dist/kb-rewrite-0.1.0-linux-x86_64.tar.gz | cut -c1-16)"
if [[ "$(cat /tmp/kb-rewrite-0.1.0/.sum 2>/dev/null)" != "$sum" ]]; then
  rm -rf /tmp/kb-rewrite-0.1.0 && tar xzf dist/kb-rewrite-0.1.0-linux-x86_64.tar.gz -C /tmp && echo "$sum" > /tmp/kb-rewrite-0.1.0/.sum
fi
export KB_REWRITE=/tmp/kb-rewrite-0.1.0/bin/kb-rewrite
KBV=/tmp/kb-verify-build/bin/kb-verify
tp="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')"
cmake -S . -B /tmp/kb-verify-build -G Ninja -DKB_ENABLE_LLVM=OFF -DKB_BUILD_VERIFY=ON -DKB_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$tp" -DKB_NLOHMANN_JSON_INCLUDE=$PWD/.carry/include > /dev/null 2>&1
cmake --build /tmp/kb-verify-build --target kb-verify > /dev/null; echo "kbv $(( $(date +%s)-t0 ))s"
# fits N: whether a step of at most N seconds ends before DEADLINE seconds
# after t0 (a script's steps in order of importance, each skipped when the
# device time left cannot hold it).
fits() { (( $(date +%s) - t0 + $1 <= ${DEADLINE:-540} )) || { echo "skipped a ${1}s step"; return 1; }; }
# select_tasks SEED:TASK...: the named generated tasks, one folder a seed
# under /tmp/rt with its manifest (kernelbench.py takes ids from file
# names); their --dir arguments in `dirs`.
select_tasks() {
  dirs=()
  local st s t
  for st in "$@"; do
    s=${st%:*} t=${st#*:}
    python3 bench/gen_tasks.py --count $((t + 1)) --seed $s -o /tmp/rt/all$s > /dev/null
    mkdir -p /tmp/rt/$s && cp /tmp/rt/all$s/manifest.json /tmp/rt/all$s/${t}_*.py /tmp/rt/$s/
    [[ " ${dirs[*]} " == *" /tmp/rt/$s "* ]] || dirs+=(--dir /tmp/rt/$s)
  done
}
# timed_slice TAG SEED GEN MODELS UNTIL_S: scripts/gpu-bench-slice (20 runs,
# --fast-math) in the time left until UNTIL_S seconds after t0; its log
# and JSON under $OUT as TAG.log and TAG.json, its task lines printed.
timed_slice() {
  local tag=$1 seed=$2 gen=$3 models=$4 until=$5
  local left=$(( until - ($(date +%s) - t0) ))
  (( left >= 60 )) || { echo "slice skipped: ${left}s left"; return; }
  timeout $left bash scripts/gpu-bench-slice --seed $seed --gen $gen --models $models \
    --json /tmp/$tag.json --runs 20 --fast-math \
    --budget-s $(( left - 15 )) --task-timeout 150 > $OUT/$tag.log 2>&1
  echo "slice rc $? $(( $(date +%s) - t0 ))s"
  grep -E "^\[|geomean" $OUT/$tag.log | tail -14 | cut -c1-250
  cp /tmp/$tag.json $OUT/ 2>/dev/null
}
# timed_tasks TAG LIMIT_S TASK_TIMEOUT_S SEED:TASK...: the named generated
# tasks (select_tasks) through bench/kernelbench.py (20 runs, --fast-math,
# verification), at most LIMIT_S seconds; its log and JSON under $OUT as
# TAG.log and TAG.json, its task lines and region rows printed.
timed_tasks() {
  local tag=$1 limit=$2 each=$3
  shift 3
  select_tasks "$@"
  timeout $limit python3 bench/kernelbench.py --kb-rewrite $KB_REWRITE --kb-verify $KBV "${dirs[@]}" \
    --json $OUT/$tag.json --runs 20 --fast-math --task-timeout $each --work /tmp/kbw-$tag > $OUT/$tag.log 2>&1
  echo "$tag rc $? $(( $(date +%s)-t0 ))s"; grep -E "ok |WRONG|FAIL" $OUT/$tag.log | cut -c1-300
  grep -h "^| kb_" /tmp/kbw-$tag/*/*/rewritten/report.md 2>/dev/null | cut -c1-250
}
# verify_fixtures TAG LIMIT_S LINES FILE...: the fixture graphs FILE...
# (with their params.json) through test/CodeGen/verify_all.py, at most
# LIMIT_S seconds; its log under $OUT as TAG.log, its last LINES lines
# printed.
verify_fixtures() {
  local tag=$1 limit=$2 lines=$3
  shift 3
  mkdir -p /tmp/$tag && cp "$@" /tmp/$tag/ 2>/dev/null
  timeout $limit python3 test/CodeGen/verify_all.py $KB_REWRITE $KBV /tmp/$tag > $OUT/$tag.log 2>&1
  echo "verify_all rc $? $(( $(date +%s)-t0 ))s"
  grep -v "^Exception\|^frame" $OUT/$tag.log | tail -$lines | cut -c1-200
}
# rw TAG SOURCE OUT [CLANG ARGS]: kb-rewrite rewrite of a C++ source with
# kb-verify and the harness, the host's libtorch headers; its log under $OUT
# as TAG.log, a line of what it rewrote printed.
flags="$(python3 -c 'from torch.utils.cpp_extension import include_paths as p; print(" ".join("-I" + d for d in p()))')"
rw() {
  local tag=$1 src=$2 out=$3
  shift 3
  timeout 240 $KB_REWRITE rewrite $src -o $out --verify on --kb-verify $KBV --verify-harness \
    -- -std=c++17 $flags "$@" > $OUT/$tag.log 2>&1
  echo "$tag rc $? $(( $(date +%s)-t0 ))s: $(grep -E 'chains? rewritten' $OUT/$tag.log | cut -c1-60)"
}
# forward_choices JSON: each model's forward choice and its timed runs
# (the runtime's forward_choice) from a slice's JSON.
forward_choices() {
  python3 - "$1" <<'PY'
import json, sys
for t in json.load(open(sys.argv[1]))['tasks']:
    if t['set'] == 'models':
        print(t['task'], 'choice', t.get('forward_choice'))
        runs = t.get('forward_ms') or {}
        print('  forward_ms', {k: [round(x, 3) for x in v] if isinstance(v, list) else v
                               for k, v in runs.items()})
PY
}
