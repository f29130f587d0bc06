#!/usr/bin/env bash
# Two pointrt builds side by side in one run (e.g. a commit before a refactor and main now):
# the micro-benchmarks of bench/*_bench.cc alternate between the builds (ROUNDS rounds, 1 thread),
# then bench/compare_onnxruntime.py alternates them on ResNet-18, PSPNet and PointNet with ONNX
# Runtime timed in every run (the common yardstick on a noisy machine).
#   bench/ab_builds.sh BEFORE_BUILD_DIR AFTER_BUILD_DIR OUT_DIR
# Each build dir holds `pointrt` and `pointrt_bench`. Prints one table per part.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 BEFORE_BUILD_DIR AFTER_BUILD_DIR OUT_DIR" >&2; exit 2; }
before=$1; after=$2; out=$3; rounds=${ROUNDS:-3}
cd "$(dirname "$0")/.."
mkdir -p "$out"
filter=${FILTER:-'^(PN2_[A-Za-z]*<false>|PN2_.*Scaling|BM_Sparse|BM_Tensor|BM_Voxelize)'}
for r in $(seq 1 "$rounds"); do
  for who in before after; do
    dir=$([ $who = before ] && echo "$before" || echo "$after")
    OMP_NUM_THREADS=1 "$dir/pointrt_bench" --benchmark_filter="$filter" --benchmark_min_time=0.2 \
      --benchmark_format=json > "$out/micro_${who}_$r.json"
    echo "micro $who round $r done $(date +%T), load $(cut -d' ' -f1 /proc/loadavg)" >&2
  done
done
for r in $(seq 1 2); do
  for who in before after; do
    dir=$([ $who = before ] && echo "$before" || echo "$after")
    .venv/bin/python bench/compare_onnxruntime.py --pointrt "$dir/pointrt" --models resnet18 pspnet pointnet \
      --threads 1 2 --repeats 1 --omp-wait-policy default > "$out/graphs_${who}_$r.txt"
    echo "graphs $who round $r done $(date +%T), load $(cut -d' ' -f1 /proc/loadavg)" >&2
  done
done
.venv/bin/python - "$out" <<'PY'
import glob, json, statistics, sys
out = sys.argv[1]
def micro(who):
    times = {}
    for f in sorted(glob.glob(f"{out}/micro_{who}_*.json")):
        for b in json.load(open(f))["benchmarks"]:
            times.setdefault(b["name"], []).append((b["real_time"], b["time_unit"]))
    return times
b, a = micro("before"), micro("after")
print("| benchmark (1 thread) | before | after | after / before |\n|---|---|---|---|")
ratios = []
for name, runs in b.items():
    if name not in a:
        continue
    mb, ma = statistics.median(t for t, _ in runs), statistics.median(t for t, _ in a[name])
    ratios.append(ma / mb)
    print(f"| {name} | {mb:.3f} {runs[0][1]} | {ma:.3f} {runs[0][1]} | {ma / mb:.2f} |")
if ratios:
    print(f"\ngeometric mean of after / before over {len(ratios)} benchmarks: {statistics.geometric_mean(ratios):.2f}")
print("\n| model | threads | before: pointrt / ORT per run | after: pointrt / ORT per run |\n|---|---|---|---|")
rows = {}
for who in ("before", "after"):
    for f in sorted(glob.glob(f"{out}/graphs_{who}_*.txt")):
        for line in open(f):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 5 and cells[1].isdigit():
                rows.setdefault((cells[0], cells[1]), {"before": [], "after": []})[who].append(cells[4])
for (model, threads), v in rows.items():
    print(f"| {model} | {threads} | {', '.join(v['before'])} | {', '.join(v['after'])} |")
PY
