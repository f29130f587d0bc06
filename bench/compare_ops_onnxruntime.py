#!/usr/bin/env python3
"""pointrt and ONNX Runtime side by side on one-node files of the standard operators, on whole
graphs made of them, on per-node overhead and on prepare time: the same files, the same inputs,
1 and 2 intra-op threads, in one run.

Cases (bench/op_cases.py, bench/graph_cases.py):
  one-node files  Transpose (rank 3-5), the reductions (last axis of 3 and 256, a middle axis,
                  the first axis), ArgMax, TopK (k 3 of 128, 16 and 1024 of 1024, 500 of all,
                  smallest 32), Add/Sub/Mul/Div in five broadcasting patterns, Pow, Where, Less,
                  Equal, Gather, GatherND, ScatterND, NonZero, Reshape, Expand, Concat, Slice,
                  Split, Tile, Pad, Resize, Cast, MatMul (attention QK^T, K=3 distances,
                  constant projection), Gemm, Softmax, LayerNormalization; each at 1e3, 1e5
                  and 1e7 elements
  whole graphs    yanx27_cls_ssg (48k nodes), point_transformer, centerpoint_post, add_chain_10k

Both runtimes are driven from Python the same way (pointrt through its bindings, which pass
numpy arrays without copies; ORT through InferenceSession, intra_op_num_threads=T, inter_op 1,
sequential, all graph optimisations). Each (runtime, threads) pair is one worker process that
runs every case: session creation (timed: "prepare"), `--warmup` untimed runs, then timed runs
until `--budget` seconds and at least `--min-iterations` have passed; it reports the median and
the best run. Workers alternate runtimes, `--repeats` times; tables give the median of the
workers' medians and pointrt / ORT (< 1: pointrt is faster). Before timing, a check worker runs
both runtimes on every case once and reports max |pointrt - ORT| per output.

    .venv/bin/python bench/compare_ops_onnxruntime.py                        # everything
    .venv/bin/python bench/compare_ops_onnxruntime.py --only 'TopK|Transpose' --repeats 1
    .venv/bin/python bench/compare_ops_onnxruntime.py --graphs yanx27_cls_ssg --no-ops

The yanx27 file takes torch 1.13 several CPU minutes to export; it is cached in --work-dir.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# The checkout's package (or, in a --baseline worker, the baseline's) before any installed one.
sys.path.insert(0, os.environ.get("POINTRT_BENCH_BASELINE") or os.path.join(os.path.dirname(HERE), "python"))


# ----------------------------------------------------------------------------- build
def build(args) -> None:
    import onnx
    import op_cases
    import graph_cases

    os.makedirs(os.path.join(args.work_dir, "ops"), exist_ok=True)
    manifest = []
    if not args.no_ops:
        for case in op_cases.all_cases([int(float(s)) for s in args.sizes]):
            if args.only and not re.search(args.only, case.name):
                continue
            path = os.path.join(args.work_dir, "ops", case.name.replace("/", "_") + ".onnx")
            onnx.save(case.model, path)
            manifest.append({"name": case.name, "kind": "op", "path": path, "inputs": [vars(s) for s in case.inputs]})
    for name, path, specs in graph_cases.build_graphs(args.work_dir, args.graphs):
        manifest.append({"name": name, "kind": "graph", "path": path, "inputs": [vars(s) for s in specs]})
    with open(os.path.join(args.work_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f)


# ----------------------------------------------------------------------------- workers
def feeds_of(case: dict) -> dict:
    import zlib
    from op_cases import InputSpec, make_input

    feeds = {}
    for i, s in enumerate(case["inputs"]):
        spec = InputSpec(**{**s, "shape": tuple(s["shape"])})
        feeds[spec.name] = make_input(spec, zlib.crc32(f"{case['name']}:{i}".encode()))
    return feeds


def open_session(runtime: str, path: str, threads: int):
    """(session, run(feeds) -> list of outputs)."""
    if runtime == "ort":
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        return sess, lambda feeds: sess.run(None, feeds)
    from pointrt.runtime import runtime_status

    rt = runtime_status().module
    if rt is None:
        raise RuntimeError(f"pointrt._pointrt is not usable (scripts/setup.sh): {runtime_status().reason}")
    if os.environ.get("POINTRT_BENCH_BASELINE") and not rt.__file__.startswith(os.environ["POINTRT_BENCH_BASELINE"]):
        raise RuntimeError(f"the baseline worker loaded {rt.__file__}")
    sess = rt.Session(path, threads=threads)
    names = sess.output_names
    # nonfinite="allow": the bindings' default NaN/Inf scan of float inputs (policy "warn") is a
    # pointrt feature ORT has no counterpart of; it is left out here (its cost: docs/benchmarks.md).
    return sess, lambda feeds: [v for _, v in sorted(sess.run(feeds, nonfinite="allow").items(),
                                                     key=lambda kv: names.index(kv[0]))]


def time_runs(run: Callable[[], object], args) -> List[float]:
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    for _ in range(args.warmup):
        run()
    times: List[float] = []
    start = time.perf_counter()
    while len(times) < args.min_iterations or (time.perf_counter() - start < args.budget and
                                               len(times) < args.max_iterations):
        t = clock()
        run()
        times.append(clock() - t)
    return times


def time_worker(args) -> None:
    with open(os.path.join(args.work_dir, "manifest.json")) as f:
        manifest = json.load(f)
    for case in manifest:
        feeds = feeds_of(case)
        t0 = time.perf_counter()
        sess, run = open_session(args.runtime, case["path"], args.threads)
        prepare_ms = (time.perf_counter() - t0) * 1e3
        times = time_runs(lambda: run(feeds), args)
        print(json.dumps({"name": case["name"], "median_us": statistics.median(times) * 1e6,
                          "min_us": min(times) * 1e6, "runs": len(times), "prepare_ms": prepare_ms}), flush=True)
        del sess, run
        gc.collect()


def check_worker(args) -> None:
    import numpy as np

    with open(os.path.join(args.work_dir, "manifest.json")) as f:
        manifest = json.load(f)
    for case in manifest:
        feeds = feeds_of(case)
        try:
            ours = open_session("pointrt", case["path"], 1)[1](feeds)
            theirs = open_session("ort", case["path"], 1)[1](feeds)
            diffs = []
            for a, b in zip(ours, theirs):
                if a.shape != b.shape:
                    diffs.append(f"shape {a.shape} vs {b.shape}")
                elif a.size:
                    diffs.append(float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))))
                else:
                    diffs.append(0.0)
            result = {"name": case["name"], "max_abs_diff": diffs}
        except Exception as e:  # reported, and the case is still timed (the worker then fails loudly)
            result = {"name": case["name"], "error": str(e).splitlines()[0][:300]}
        print(json.dumps(result), flush=True)


# ----------------------------------------------------------------------------- driver
def spawn(args, mode: List[str], env: Dict[str, str]) -> List[dict]:
    cmd = [sys.executable, os.path.abspath(__file__), *mode, "--work-dir", args.work_dir, "--warmup", str(args.warmup),
           "--budget", str(args.budget), "--min-iterations", str(args.min_iterations), "--max-iterations",
           str(args.max_iterations), "--clock", args.clock]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(" ".join(mode) + " failed:\n" + r.stdout[-2000:] + r.stderr[-4000:])
    return [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]


def worker_env(args, runtime: str, threads: int) -> Dict[str, str]:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    if runtime in ("pointrt", "base") and args.omp_wait_policy != "default":
        env["OMP_WAIT_POLICY"] = args.omp_wait_policy
    if runtime == "base":  # --baseline: another build's python/ folder first on the path
        env["POINTRT_BENCH_BASELINE"] = os.path.abspath(args.baseline)
    return env


def collect(args) -> Dict[str, Dict[str, List[dict]]]:
    """{case: {"<runtime>/<threads>": [per-worker results]}}, workers alternating runtimes."""
    results: Dict[str, Dict[str, List[dict]]] = {}
    for rep in range(args.repeats):
        for t in args.threads:
            order = ["pointrt", "ort"] + (["base"] if args.baseline else [])
            order = order if rep % 2 == 0 else order[::-1]
            for runtime in order:
                started = time.time()
                rows = spawn(args, ["--time-worker", "--runtime", runtime, "--threads", str(t)],
                             worker_env(args, runtime, t))
                print(f"# repeat {rep + 1}/{args.repeats} {runtime} threads={t}: {len(rows)} cases in "
                      f"{time.time() - started:.0f} s; load {os.getloadavg()[0]:.1f}", flush=True)
                for row in rows:
                    results.setdefault(row["name"], {}).setdefault(f"{runtime}/{t}", []).append(row)
    return results


def med(rows: List[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def fmt_us(us: float) -> str:
    return f"{us / 1e3:.2f} ms" if us >= 1e4 else f"{us:.1f} us"


def op_table(results, checks: Dict[str, dict], threads: List[int]) -> List[str]:
    base = any(k.startswith("base/") for by in results.values() for k in by)
    head = "| case | " + " | ".join(f"pointrt {t}T | ORT {t}T | ratio {t}T" for t in threads) + (
        " | baseline ratio " + " / ".join(f"{t}T" for t in threads) if base else "") + " | max abs diff |"
    lines = [head, "|" + "---|" * (2 + 3 * len(threads) + base)]
    worst = {t: [] for t in threads}
    for name, by in results.items():
        if "/" not in name:
            continue
        cells = []
        for t in threads:
            p, o = med(by[f"pointrt/{t}"], "median_us"), med(by[f"ort/{t}"], "median_us")
            worst[t].append((p / o, name))
            cells += [fmt_us(p), fmt_us(o), (f"**{p / o:.2f}**" if p / o > 1.0 else f"{p / o:.2f}")]
        if f"base/{threads[0]}" in by:  # --baseline: its ratio to ORT beside ours
            cells += [" / ".join(f"{med(by[f'base/{t}'], 'median_us') / med(by[f'ort/{t}'], 'median_us'):.2f}"
                                 for t in threads)]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {diff_text(checks.get(name, {}))} |")
    for t in threads:
        above = sorted(worst[t], reverse=True)
        n_above = sum(1 for r, _ in above if r > 1.0)
        lines.append("")
        lines.append(f"{t} thread(s): {n_above} of {len(above)} cases above 1.0; worst: " +
                     ", ".join(f"{n} {r:.2f}" for r, n in above[:5]))
    return lines


def diff_text(check: dict) -> str:
    if "error" in check:
        return check["error"]
    return ", ".join(f"{d:.1e}" if isinstance(d, float) else d for d in check.get("max_abs_diff", []))


def graph_table(results, checks: Dict[str, dict], threads: List[int]) -> List[str]:
    lines = ["| graph | threads | pointrt ms | ORT ms | pointrt / ORT | pointrt min ms | ORT min ms | "
             "pointrt prepare ms | ORT prepare ms | max abs diff |", "|---|---|---|---|---|---|---|---|---|---|"]
    for name, by in results.items():
        if "/" in name:
            continue
        for t in threads:
            p, o = by[f"pointrt/{t}"], by[f"ort/{t}"]
            pm, om = med(p, "median_us") / 1e3, med(o, "median_us") / 1e3
            extra = ""
            if name.startswith("add_chain"):
                extra = f" ({pm * 1e3 / 1e4:.2f} vs {om * 1e3 / 1e4:.2f} us per node)"
            if f"base/{t}" in by:  # --baseline
                extra += f" (baseline {med(by[f'base/{t}'], 'median_us') / 1e3 / om:.2f})"
            lines.append(f"| {name}{extra} | {t} | {pm:.3f} | {om:.3f} | {pm / om:.2f} | "
                         f"{min(r['min_us'] for r in p) / 1e3:.3f} | {min(r['min_us'] for r in o) / 1e3:.3f} | "
                         f"{med(p, 'prepare_ms'):.0f} | {med(o, 'prepare_ms'):.0f} | {diff_text(checks.get(name, {}))} |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--repeats", type=int, default=3, help="worker processes per (runtime, threads)")
    ap.add_argument("--sizes", nargs="+", default=["1e3", "1e5", "1e7"])
    ap.add_argument("--only", help="regex on the one-node case names (e.g. 'TopK|ReduceSum/last')")
    ap.add_argument("--no-ops", action="store_true", help="whole graphs only")
    ap.add_argument("--graphs", nargs="*", default=["yanx27_cls_ssg", "point_transformer", "centerpoint_post",
                                                     "add_chain_10k"])
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--budget", type=float, default=0.15, help="seconds of timed runs per case (at least)")
    ap.add_argument("--min-iterations", type=int, default=5)
    ap.add_argument("--max-iterations", type=int, default=2000)
    ap.add_argument("--clock", default="wall", choices=["wall", "cpu"],
                    help="'cpu': the process's CPU time per run instead of wall time; robust to other load, "
                         "meaningful at 1 thread only (spinning pool threads count at 2); for development")
    ap.add_argument("--omp-wait-policy", default="passive", choices=["passive", "active", "default"],
                    help="OMP_WAIT_POLICY for pointrt's workers (see bench/compare_onnxruntime.py)")
    ap.add_argument("--work-dir", default=os.path.join(tempfile.gettempdir(), "pointrt_ops_bench"))
    ap.add_argument("--json", help="write every worker's numbers here")
    ap.add_argument("--baseline", help="a python/ folder of another pointrt build (e.g. a copy of main's): timed as a "
                    "third runtime in the same alternating run; the one-node table adds its ratios to ORT")
    ap.add_argument("--build", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--time-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--check-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--runtime", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.time_worker:
        args.threads = args.threads[0]
        return time_worker(args)
    if args.check_worker:
        return check_worker(args)
    os.makedirs(args.work_dir, exist_ok=True)
    if args.build:
        return build(args)
    build_cmd = ["--build", "--sizes", *args.sizes, "--graphs", *args.graphs] + (["--only", args.only] if args.only
                                                                                else []) + (["--no-ops"] if args.no_ops
                                                                                            else [])
    spawn(args, build_cmd, dict(os.environ))
    checks = {c["name"]: c for c in spawn(args, ["--check-worker"], worker_env(args, "pointrt", 1))}
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, load {os.getloadavg()}", flush=True)
    results = collect(args)
    print(f"# done {time.strftime('%H:%M:%S UTC', time.gmtime())}, load {os.getloadavg()}")
    print("\n".join(graph_table(results, checks, args.threads)))
    print()
    print("\n".join(op_table(results, checks, args.threads)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results, "checks": checks, "load": os.getloadavg()}, f, indent=1)


if __name__ == "__main__":
    main()
