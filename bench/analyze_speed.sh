#!/usr/bin/env bash
# Times `kb-rewrite analyze` (wall clock, whole process) on large graphs:
# median and min of N runs. Usage: bench/analyze_speed.sh [N] [GRAPH...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${KB_BUILD_DIR:-$root/build}/bin/kb-rewrite"
n="${1:-21}"; shift || true
graphs=("$@")
if [[ ${#graphs[@]} -eq 0 ]]; then
  graphs=("$root"/test/fixtures/graphs/torchvision-0.26/resnet101.graph.txt
          "$root"/test/fixtures/graphs/torchvision-0.14/resnet101.graph.txt
          "$root"/test/fixtures/graphs/torchvision-0.26/swin_t.graph.txt)
fi
printf "%-60s %7s %10s %10s\n" graph lines median_s min_s
for g in "${graphs[@]}"; do
  times=()
  for ((i = 0; i < n; i++)); do
    s=$(date +%s.%N); "$bin" analyze "$g" > /dev/null; e=$(date +%s.%N)
    times+=("$(echo "$e - $s" | bc)")
  done
  sorted=($(printf "%s\n" "${times[@]}" | sort -n))
  printf "%-60s %7d %10.3f %10.3f\n" "${g#$root/}" "$(wc -l < "$g")" \
    "${sorted[$((n / 2))]}" "${sorted[0]}"
done
