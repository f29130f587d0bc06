#!/usr/bin/env python3
"""pointrt against the pure-PyTorch forward, PointNet++ operators and whole models.

Three sections, all in one process so that both sides see the same machine state:

  ops      every pointrt PointNet++ operator at realistic sizes (FPS 16384 -> 4096; BallQuery
           N=16384, M=4096, r 0.1 / 0.3, nsample 32 / 64; ThreeNN 16384 queries over 4096
           points; KNN k=16; GatherPoints, GroupPoints, ThreeInterpolate with 64 channels),
           pointrt against ``pointrt.torch.ops`` (the pure-PyTorch autograd Functions). For
           the three data-movement operators also a memory-bandwidth bound measured in the same
           run (read the input bytes + write the output bytes, one thread) and PyTorch's native
           kernels alone with preallocated outputs (``out=``). --op-filter narrows the cases.
  scaling  BallQuery / KNN / ThreeNN / FPS for N = 4k ... 128k points, M = N/4 centres,
           constant expected neighbourhood (BallQuery r = 0.1 * (16384/N)^(1/3), ~69 points per
           ball, nsample 32; KNN k = 16; ThreeNN: N queries over N/4 points; FPS N -> N/4).
           PyTorch runs only where its predicted time per call (from the previous size and the
           brute-force growth, N*M) is under --torch-max-call seconds; the table says where it
           was skipped (--torch-max-call 0: PyTorch only at the first size, pointrt's first 256
           queries still checked everywhere). --families and --sizes narrow the series.
  models   SSG classifier (1024 points), MSG segmenter (4096 points + 6 channels), PVN3D
           Pointnet2MSG (12288 points + 6 channels), random weights (seed 0), BatchNorm statistics
           randomized, eval mode: pointrt against PyTorch CPU eager (the same nn.Module, whose
           point operators are the ``pointrt.torch.ops`` forwards).

How each operator is run: a one-node ONNX model is written by ``torch.onnx.export`` through the
operator's ``symbolic`` (``pointrt.export``, traced on a tiny input, point axes dynamic), loaded
once per thread count with ``pointrt._pointrt.Session(path, threads=T)`` and fed numpy arrays;
PyTorch runs ``pointrt.torch.ops.<Op>.apply`` on the same data (``torch.from_numpy``, no copy)
under ``torch.no_grad()`` after ``torch.set_num_threads(T)``. Points are uniform in the unit cube
(numpy seeds fixed); centres are the first M points of the cloud (a random subset, like FPS
output). Before timing, outputs are compared: index outputs must be identical, float outputs
within 1e-5 (ops) / 1e-4 relative to max|torch| (models); a mismatch is reported in the table.

Timing: after warm-up, the two sides alternate in --rounds rounds; each round times PyTorch
(>= 1 call) and pointrt (>= 3 calls) for up to --budget/(2*rounds) seconds each; the tables give
the median latency over all timed calls and the ratio torch / pointrt (> 1: pointrt is faster).
OMP_WAIT_POLICY is set to passive before torch and pointrt load libgomp (see --omp-wait-policy).

Run from the repository root after scripts/setup.sh:
  .venv/bin/python bench/pointnet2_vs_torch.py                 # full run, ~10 min on 2 cores
  .venv/bin/python bench/pointnet2_vs_torch.py --quick         # smoke run, ~1-2 min
  build/pointrt bench build/bench-pointnet2/pvn3d.onnx --threads 1 --profile \
      --input points=build/bench-pointnet2/pvn3d_input.npy
      # the exported files (ssg, msg_seg, pvn3d, op_*) and inputs stay in --cache-dir
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _early_args():
    """Environment that must be set before torch / libgomp / libblas are loaded."""
    def opt(name, default):
        for i, a in enumerate(sys.argv):
            if a == name and i + 1 < len(sys.argv):
                return sys.argv[i + 1]
            if a.startswith(name + "="):
                return a.split("=", 1)[1]
        return default

    # libgomp reads OMP_WAIT_POLICY once, when it is loaded (by torch or by pointrt).
    policy = opt("--omp-wait-policy", "passive")
    if policy != "default":
        os.environ["OMP_WAIT_POLICY"] = policy
    # --blas-dir: another libblas.so.3 (OpenBLAS) for PyTorch; the dynamic loader only reads
    # LD_LIBRARY_PATH at start-up, so re-execute once with it set. pointrt does not use BLAS.
    blas = opt("--blas-dir", "")
    if blas:
        blas = os.path.abspath(blas)
        if not os.path.exists(os.path.join(blas, "libblas.so.3")):
            sys.exit(f"--blas-dir {blas}: no libblas.so.3 there")
        if os.environ.get("_PN2_BENCH_BLAS") != blas:
            env = dict(os.environ, _PN2_BENCH_BLAS=blas, OPENBLAS_NUM_THREADS="1",
                       LD_LIBRARY_PATH=blas + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
            os.execve(sys.executable, [sys.executable] + sys.argv, env)


_early_args()

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

for p in (os.path.join(_ROOT, "python"), _ROOT):
    if p not in sys.path:
        sys.path.insert(0, p)

import pointrt  # noqa: E402
from pointrt.runtime import load_runtime  # noqa: E402
from pointrt.torch import ops  # noqa: E402

from models.sparse_detectors import randomize_batchnorm  # noqa: E402  (BatchNorm statistics, seeded)


# ----------------------------------------------------------------------------- helpers

def cube(n, seed):
    return np.random.default_rng(seed).random((1, n, 3), dtype=np.float32)


def fmt_ms(x):
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def fmt_ratio(x):
    if x is None:
        return "-"
    return f"{x:.0f}x" if x >= 100 else f"{x:.1f}x"


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


class OneOp(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def export_op(fn, trace_inputs, input_names, output_names, dyn, path):
    """One-node ONNX model through the ops' symbolic; dyn: {name: {axis: symbol}}."""
    import onnx
    pointrt.export(OneOp(fn), tuple(trace_inputs), path, input_names=input_names,
                   output_names=output_names, dynamic_points=False, dynamic_axes=dyn,
                   verify=False, quiet=True)
    g = onnx.load(path).graph
    kinds = [(n.domain, n.op_type) for n in g.node]
    if len(kinds) != 1 or kinds[0][0] != "pointrt":
        raise RuntimeError(f"{path}: expected one pointrt node, got {kinds}")
    return path


def compare(ref, got, float_tol):
    """ref, got: lists of numpy arrays. Returns (ok, text)."""
    notes, ok = [], True
    for r, g in zip(ref, got):
        if r.shape != g.shape:
            return False, f"shape {list(g.shape)} vs {list(r.shape)}"
        if np.issubdtype(r.dtype, np.integer):
            bad = int(np.count_nonzero(r.astype(np.int64) != g.astype(np.int64)))
            if bad:
                ok = False
                notes.append(f"{bad}/{r.size} indices differ")
            else:
                notes.append("indices identical")
        else:
            err = float(np.abs(r.astype(np.float64) - g.astype(np.float64)).max()) if r.size else 0.0
            scale = max(1.0, float(np.abs(r).max())) if r.size else 1.0
            if err > float_tol * scale:
                ok = False
            notes.append(f"max err {err:.1e}")
    return ok, ", ".join(notes)


class Timer:
    def __init__(self, args):
        self.rounds = args.rounds
        self.budget = args.budget
        self.pt_max_calls = args.pt_max_calls
        self.slow_call = args.torch_max_call

    def pair(self, torch_call, pt_call, threads, do_torch=True, budget=None, torch_first_s=None):
        """Median ms of torch_call and pt_call (alternating rounds), None where not run.

        torch_first_s: duration of an earlier torch call on the same data (the output check);
        above 0.5 s that call counts as the warm-up, above --torch-max-call only one call is
        timed (one round)."""
        budget = self.budget if budget is None else budget
        per_side = budget / (2 * self.rounds)
        ts, ps = [], []
        torch.set_num_threads(threads)
        torch_rounds = self.rounds
        if do_torch:
            if torch_first_s is None or torch_first_s < 0.5:
                t0 = time.perf_counter()
                torch_call()            # warm-up
                torch_first_s = time.perf_counter() - t0
            if torch_first_s > self.slow_call:
                torch_rounds = 1
        t0 = time.perf_counter()
        pt_call()                       # warm-up
        pt_first = time.perf_counter() - t0
        pt_min = 3 if pt_first < 0.2 else 1
        for r in range(self.rounds):
            if do_torch and r < torch_rounds:
                torch.set_num_threads(threads)
                t_end = time.perf_counter() + per_side
                while True:
                    t0 = time.perf_counter()
                    torch_call()
                    t1 = time.perf_counter()
                    ts.append((t1 - t0) * 1e3)
                    if t1 >= t_end:
                        break
            t_end = time.perf_counter() + per_side
            n = 0
            while True:
                t0 = time.perf_counter()
                pt_call()
                t1 = time.perf_counter()
                ps.append((t1 - t0) * 1e3)
                n += 1
                if n >= pt_min and (t1 >= t_end or n >= self.pt_max_calls // self.rounds):
                    break
        tm = statistics.median(ts) if ts else None
        pm = statistics.median(ps)
        return tm, pm, len(ts), len(ps)


# ----------------------------------------------------------------------------- operator cases

class OpCase:
    """A pointrt operator on given numpy inputs, the torch forward on the same data."""

    def __init__(self, label, key, fn, inputs, input_names, output_names, dyn, trace_inputs,
                 float_tol=1e-5, work=None, prefix=None):
        self.label = label
        self.key = key              # export cache key (op + attributes)
        self.fn = fn                # torch tensors -> output tensor(s)
        self.inputs = inputs        # list of numpy arrays
        self.input_names = input_names
        self.output_names = output_names
        self.dyn = dyn
        self.trace_inputs = trace_inputs
        self.float_tol = float_tol
        self.work = work            # brute-force work estimate (for skipping torch)
        # prefix(k) -> (torch inputs, output slicer): torch on the first k queries (or the
        # first k FPS samples) only, for checking pointrt where the full torch call is too slow
        self.prefix = prefix
        self.export_fn = fn         # what torch.onnx.export traces (same symbolic)

    def torch_inputs(self):
        return [torch.from_numpy(a) for a in self.inputs]

    def feeds(self):
        return dict(zip(self.input_names, self.inputs))


def _query_prefix(xs, k):
    """(torch inputs restricted to the first k queries, k, None: same fn)."""
    return (xs[0], xs[1][:, :k].contiguous()), k, None


def _unknown_prefix(xs, k):
    return (xs[0][:, :k].contiguous(), xs[1]), k, None


def _trace_cloud(n, seed=100):
    return torch.from_numpy(cube(n, seed))


class _FPSExportOnly(torch.autograd.Function):
    """FurthestPointSample's own ``symbolic`` with a constant-time ``forward``, for export only.

    torch 1.13's tracer records the ops that the real forward runs inside ``apply`` (its
    npoint-step Python loop), and that grows faster than linearly: exporting the one-node model
    took 4 s for npoint 1024, 38 s for 4096 and 206 s for 8192 on this machine. The node written
    is the same (same symbolic); the real forward is what PyTorch is timed with."""

    @staticmethod
    def forward(ctx, xyz, npoint, ignore_origin=0):
        return torch.zeros((xyz.shape[0], int(npoint)), dtype=torch.int32)

    symbolic = staticmethod(ops.FurthestPointSample.symbolic)


def case_fps(n, npoint):
    case = OpCase(f"FurthestPointSample N={n} -> {npoint}", ("fps", npoint),
                  lambda x: ops.FurthestPointSample.apply(x, npoint, 0),
                  [cube(n, 1)], ["xyz"], ["idx"], {"xyz": {1: "n"}},
                  [_trace_cloud(64)], work=n * npoint,
                  prefix=lambda xs, k: ((xs[0],), k, lambda x: ops.FurthestPointSample.apply(x, k, 0)))
    case.export_fn = lambda x: _FPSExportOnly.apply(x, npoint, 0)
    return case


def case_ball(n, m, r, ns):
    xyz = cube(n, 2)
    return OpCase(f"BallQuery N={n} M={m} r={r:g} nsample={ns}", ("ball", r, ns),
                  lambda a, b: ops.BallQuery.apply(a, b, r, ns, 0.0),
                  [xyz, np.ascontiguousarray(xyz[:, :m])], ["xyz", "new_xyz"], ["idx"],
                  {"xyz": {1: "n"}, "new_xyz": {1: "m"}, "idx": {1: "m"}},
                  [_trace_cloud(64), _trace_cloud(16, 101)], work=n * m, prefix=_query_prefix)


def case_knn(n, m, k):
    xyz = cube(n, 3)
    return OpCase(f"KNN N={n} M={m} k={k}", ("knn", k),
                  lambda a, b: ops.KNN.apply(a, b, k),
                  [xyz, np.ascontiguousarray(xyz[:, :m])], ["xyz", "new_xyz"], ["idx", "dist2"],
                  {"xyz": {1: "n"}, "new_xyz": {1: "m"}, "idx": {1: "m"}, "dist2": {1: "m"}},
                  [_trace_cloud(64), _trace_cloud(16, 101)], work=n * m, prefix=_query_prefix)


def case_three_nn(n, m):
    unknown = cube(n, 4)
    known = np.ascontiguousarray(unknown[:, :m])
    return OpCase(f"ThreeNN {n} queries over {m} points", ("three_nn",),
                  lambda u, k: ops.ThreeNN.apply(u, k),
                  [unknown, known], ["unknown", "known"], ["dist", "idx"],
                  {"unknown": {1: "n"}, "known": {1: "m"}, "dist": {1: "n"}, "idx": {1: "n"}},
                  [_trace_cloud(64), _trace_cloud(16, 101)], work=n * m, prefix=_unknown_prefix)


def case_gather(c, n, m):
    rng = np.random.default_rng(5)
    f = rng.standard_normal((1, c, n), dtype=np.float32)
    idx = rng.integers(0, n, (1, m), dtype=np.int32)
    return _with_bytes(f, idx, out_bytes=c * m * 4, case=OpCase(f"GatherPoints C={c} N={n} -> M={m}", ("gather",),
                  lambda a, b: ops.GatherPoints.apply(a, b),
                  [f, idx], ["features", "idx"], ["out"],
                  {"features": {1: "c", 2: "n"}, "idx": {1: "m"}, "out": {1: "c", 2: "m"}},
                  [torch.randn(1, 4, 64), torch.randint(0, 64, (1, 16), dtype=torch.int32)]))


def case_group(c, n, m, s):
    rng = np.random.default_rng(6)
    f = rng.standard_normal((1, c, n), dtype=np.float32)
    idx = rng.integers(0, n, (1, m, s), dtype=np.int32)
    return _with_bytes(f, idx, out_bytes=c * m * s * 4, case=OpCase(f"GroupPoints C={c} N={n} M={m} nsample={s}", ("group",),
                  lambda a, b: ops.GroupPoints.apply(a, b),
                  [f, idx], ["features", "idx"], ["out"],
                  {"features": {1: "c", 2: "n"}, "idx": {1: "m", 2: "s"},
                   "out": {1: "c", 2: "m", 3: "s"}},
                  [torch.randn(1, 4, 64), torch.randint(0, 64, (1, 16, 8), dtype=torch.int32)]))


def case_interp(c, m, n):
    rng = np.random.default_rng(7)
    f = rng.standard_normal((1, c, m), dtype=np.float32)
    idx = rng.integers(0, m, (1, n, 3), dtype=np.int32)
    w = rng.random((1, n, 3), dtype=np.float32)
    w /= w.sum(-1, keepdims=True)
    return _with_bytes(f, idx, w, out_bytes=c * n * 4, case=OpCase(f"ThreeInterpolate C={c} {m} -> {n} points", ("interp",),
                  lambda a, b, ww: ops.ThreeInterpolate.apply(a, b, ww),
                  [f, idx, w], ["features", "idx", "weight"], ["out"],
                  {"features": {1: "c", 2: "m"}, "idx": {1: "n"}, "weight": {1: "n"},
                   "out": {1: "c", 2: "n"}},
                  [torch.randn(1, 4, 16), torch.randint(0, 16, (1, 64, 3), dtype=torch.int32),
                   torch.rand(1, 64, 3)]))


def _with_bytes(*inputs, out_bytes, case):
    """Record the bytes an operator must at least read (every input: an index/weight entry is
    used once, and a gather touches most cache lines of its feature rows at these sizes) and
    write (its output), for the bandwidth bound."""
    case.in_bytes = sum(a.nbytes for a in inputs)
    case.out_bytes = out_bytes
    return case


def torch_kernel_only(case):
    """PyTorch's native kernels for the case with preallocated outputs (``out=``) and the index
    conversion done beforehand: what PyTorch costs without the Function's checks and without
    allocating its output (a fresh multi-MiB tensor per call costs page faults here: torch 1.13
    allocates it with posix_memalign, which mmaps above 32 MiB, and THP is madvise-only)."""
    ts = [torch.from_numpy(a) for a in case.inputs]
    f = ts[0]
    B, C, N = f.shape
    if case.key == ("gather",) or case.key == ("group",):
        lidx = ts[1].long().reshape(B, 1, -1).expand(B, C, -1)
        out = torch.empty(lidx.shape, dtype=f.dtype)
        return lambda: torch.gather(f, 2, lidx, out=out)
    if case.key == ("interp",):
        idx, w = ts[1].long(), ts[2]
        n = idx.shape[1]
        ids = [idx[:, :, j].reshape(B, 1, n).expand(B, C, n) for j in range(3)]
        ws = [w[:, :, j].reshape(B, 1, n) for j in range(3)]
        g = [torch.empty((B, C, n)) for _ in range(3)]
        out = torch.empty((B, C, n))

        def run():
            for j in range(3):
                torch.gather(f, 2, ids[j], out=g[j])
                g[j].mul_(ws[j])
            torch.add(g[0], g[1], out=out)
            out.add_(g[2])
        return run
    return None


def bandwidth_bound(in_bytes, out_bytes, budget_s=1.0):
    """Lower bound (ms) for an operator that reads in_bytes and writes out_bytes, measured now
    on this machine with one thread: the median time to read a buffer of in_bytes (np.max, a
    vectorised reduction) plus the median time to write a buffer of out_bytes (ndarray.fill, a
    vectorised memset). The buffers are reused across calls like the operator's inputs and
    output, so they have the same cache residency (in_bytes mostly in L3 here, out_bytes in L3
    when small and in DRAM when larger). Also returns the median memcpy of out_bytes into another
    buffer (what any op that materialises its output costs at least once the output is
    computed) for reference. (read ms, write ms, copy ms)"""
    src = np.ones(max(1, in_bytes // 4), np.float32)
    out = np.empty(max(1, out_bytes // 4), np.float32)
    out2 = np.empty_like(out)
    out.fill(1.0)
    out2.fill(1.0)
    return (median_ms(lambda: src.max(), budget_s / 3), median_ms(lambda: out.fill(0.5), budget_s / 3),
            median_ms(lambda: np.copyto(out2, out), budget_s / 3))


def median_ms(fn, budget_s):
    fn()
    ts, t_end = [], time.perf_counter() + budget_s
    while len(ts) < 5 or time.perf_counter() < t_end:
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


class Runner:
    def __init__(self, args, rt, workdir):
        self.args = args
        self.rt = rt
        self.workdir = workdir
        self.timer = Timer(args)
        self.paths = {}
        self.sessions = {}

    def path(self, case):
        if case.key not in self.paths:
            p = os.path.join(self.workdir, "op_" + "_".join(str(k) for k in case.key) + ".onnx")
            export_op(case.export_fn, case.trace_inputs, case.input_names, case.output_names, case.dyn, p)
            self.paths[case.key] = p
        return self.paths[case.key]

    def session(self, case, threads):
        k = (case.key, threads)
        if k not in self.sessions:
            self.sessions[k] = self.rt.Session(self.path(case), threads=threads)
        return self.sessions[k]

    def check(self, case, threads):
        ti = case.torch_inputs()
        torch.set_num_threads(threads)
        t0 = time.perf_counter()
        with torch.no_grad():
            ref = case.fn(*ti)
        t_first = time.perf_counter() - t0
        ref = [ref] if isinstance(ref, torch.Tensor) else list(ref)
        sess = self.session(case, threads)
        got = sess.run(case.feeds())
        got = [got[n] for n in case.output_names]
        ok, text = compare([r.numpy() for r in ref], got, case.float_tol)
        return ok, text, t_first

    def check_prefix(self, case, threads, k=256):
        """Compare pointrt's full output with torch on the first k queries / FPS samples."""
        ti, k, fn = case.prefix(case.torch_inputs(), k)
        torch.set_num_threads(threads)
        with torch.no_grad():
            ref = (fn or case.fn)(*ti)
        ref = [ref] if isinstance(ref, torch.Tensor) else list(ref)
        got = self.session(case, threads).run(case.feeds())
        got = [np.ascontiguousarray(got[n][:, :k]) for n in case.output_names]
        ok, text = compare([r.numpy() for r in ref], got, case.float_tol)
        return ok, f"first {k} checked: {text}"

    def time_case(self, case, threads, do_torch=True, budget=None, torch_first_s=None):
        ti = case.torch_inputs()
        sess = self.session(case, threads)
        feeds = case.feeds()

        def torch_call():
            with torch.no_grad():
                case.fn(*ti)

        return self.timer.pair(torch_call, lambda: sess.run(feeds), threads, do_torch, budget,
                               torch_first_s)


# ----------------------------------------------------------------------------- sections

def section_ops(runner, args, results):
    n, m = (4096, 1024) if args.quick else (16384, 4096)   # --quick: a smoke run at 1/4 size
    cases = [case_fps(n, m)]
    for r in (0.1, 0.3):
        for ns in (32, 64):
            cases.append(case_ball(n, m, r, ns))
    cases += [case_three_nn(n, m), case_knn(n, m, 16),
              case_gather(64, n, m), case_group(64, n, m, 32),
              case_interp(64, m, n)]
    if args.op_filter:
        cases = [c for c in cases if any(f.lower() in c.label.lower() for f in args.op_filter)]
    rows, bw_rows = [], []
    for case in cases:
        ok, text, t_first = runner.check(case, args.threads[0])
        for t in args.threads:
            tm, pm, nt, npt = runner.time_case(case, t, torch_first_s=t_first)
            ratio = tm / pm
            rows.append([case.label, t, fmt_ms(pm), fmt_ms(tm), fmt_ratio(ratio),
                         "yes" if ratio >= 10 else "**no**", text if ok else f"**MISMATCH: {text}**",
                         f"{nt} / {npt}"])
            results["ops"].append(dict(op=case.label, threads=t, pointrt_ms=pm, torch_ms=tm,
                                       ratio=ratio, agree=ok, check=text, torch_calls=nt,
                                       pointrt_calls=npt))
            print(f"  {case.label} threads={t}: pointrt {pm:.3f} ms, torch {tm:.2f} ms, "
                  f"{ratio:.1f}x ({text})", file=sys.stderr, flush=True)
            if getattr(case, "out_bytes", None) is not None and t == 1:
                rd, wr, cp = bandwidth_bound(case.in_bytes, case.out_bytes)
                bound = rd + wr
                torch.set_num_threads(1)
                kern = torch_kernel_only(case)
                tk = median_ms(kern, 1.0) if kern else None
                bw_rows.append([case.label, f"{case.in_bytes / 2**20:.2f} / {case.out_bytes / 2**20:.2f}",
                                fmt_ms(pm), fmt_ms(tm), fmt_ms(tk), fmt_ms(rd), fmt_ms(wr), fmt_ms(bound),
                                f"{pm / bound:.1f}x", f"{tm / bound:.1f}x",
                                f"{tk / bound:.1f}x" if tk else "-", fmt_ms(cp),
                                fmt_ms(tm / 10) + (" ms" if tm / 10 >= bound else " ms: below the bound")])
                results.setdefault("bandwidth", []).append(
                    dict(op=case.label, in_bytes=case.in_bytes, out_bytes=case.out_bytes,
                         pointrt_ms=pm, torch_ms=tm, torch_kernel_only_ms=tk, read_ms=rd, write_ms=wr, bound_ms=bound,
                         copy_out_ms=cp))
                print(f"    bound: read {rd:.3f} + write {wr:.3f} = {bound:.3f} ms, memcpy(out) "
                      f"{cp:.3f} ms", file=sys.stderr, flush=True)
    table = md_table(["operator", "threads", "pointrt ms", "PyTorch ms", "torch / pointrt",
                      ">= 10x", "outputs (checked at 1st thread count)",
                      "timed calls (torch / pointrt)"], rows)
    print("\n### Operators at realistic sizes (median latency)\n\n" + table + "\n", flush=True)
    if bw_rows:
        table = md_table(["operator (1 thread)", "MiB read / written", "pointrt ms", "PyTorch ms",
                          "PyTorch kernels only (out=) ms", "read bound ms", "write bound ms",
                          "bound ms", "pointrt / bound", "PyTorch / bound",
                          "PyTorch kernels only / bound", "memcpy(out) ms", "10x PyTorch needs pointrt at"], bw_rows)
        print("\n### Data-movement operators against the memory-bandwidth bound\n\n" + table + "\n",
              flush=True)


def section_scaling(runner, args, results):
    sizes = args.sizes or [4096 << i for i in range(6)]
    if args.quick and not args.sizes:
        sizes = sizes[:2]
    families = [
        ("BallQuery", lambda n: case_ball(n, n // 4, round(0.1 * (16384 / n) ** (1 / 3), 5), 32)),
        ("KNN k=16", lambda n: case_knn(n, n // 4, 16)),
        ("ThreeNN", lambda n: case_three_nn(n, n // 4)),
        ("FurthestPointSample", lambda n: case_fps(n, n // 4)),
    ]
    if args.families:
        families = [f for f in families if any(w.lower() in f[0].lower() for w in args.families)]
    for fam, make in families:
        rows = []
        for t in args.threads:
            last = None   # (work, torch seconds) of the previous size where torch ran
            skipping = False
            base_pt = None
            for n in sizes:
                case = make(n)
                predicted = None
                if last is not None:
                    predicted = last[1] * case.work / last[0]
                do_torch = not skipping and (predicted is None or predicted <= args.torch_max_call)
                single = None
                if do_torch:
                    ok, text, t_first = runner.check(case, t)
                    if t_first > args.torch_max_call:
                        # too slow to repeat: the checked call is the only torch sample
                        single = t_first * 1e3
                        do_torch = False
                else:
                    skipping = True
                    ok, text = runner.check_prefix(case, t)
                budget = args.scaling_budget
                tm, pm, _, npt = runner.time_case(case, t, do_torch, budget, t_first if do_torch else None)
                if single is not None:
                    tm = single
                    text += "; torch: one call"
                if tm is not None:
                    last = (case.work, tm / 1e3)
                if base_pt is None:
                    base_pt = (n, pm)
                growth = pm / base_pt[1]
                per_query = pm * 1e3 / (n // 4 if fam != "ThreeNN" else n)
                note = text if ok else f"**MISMATCH: {text}**"
                if tm is None:
                    note = (f"torch skipped (predicted {predicted:.0f} s/call); " if predicted
                            else "torch skipped; ") + note
                rows.append([n, t, fmt_ms(pm), f"{growth:.1f}x", f"{per_query:.2f}",
                             fmt_ms(tm), fmt_ratio(tm / pm if tm else None), note])
                results["scaling"].append(dict(family=fam, n=n, threads=t, pointrt_ms=pm,
                                               torch_ms=tm, agree=ok, check=text,
                                               predicted_torch_s=predicted))
                print(f"  {fam} N={n} threads={t}: pointrt {pm:.3f} ms, torch "
                      f"{'-' if tm is None else f'{tm:.1f}'} ms ({note})",
                      file=sys.stderr, flush=True)
        unit = "us per query" if fam != "FurthestPointSample" else "us per sample"
        table = md_table(["N", "threads", "pointrt ms", f"growth vs N={sizes[0]}", f"pointrt {unit}",
                          "PyTorch ms", "torch / pointrt", "notes"], rows)
        desc = {
            "BallQuery": "M = N/4 centres, r = 0.1*(16384/N)^(1/3) (~69 points per ball), nsample 32",
            "KNN k=16": "M = N/4 queries, k = 16",
            "ThreeNN": "N queries over N/4 known points",
            "FurthestPointSample": "N -> N/4 samples (O(N * npoint) by definition: 4x per doubling)",
        }[fam]
        print(f"\n### Scaling: {fam} ({desc})\n\n" + table + "\n", flush=True)


def model_cases():
    from models.pointnet2_msg_seg import Pointnet2MSGSeg
    from models.pointnet2_ssg_cls import Pointnet2SSGCls
    from models.pvn3d_pointnet2 import NUM_POINTS, Pointnet2MSG, example_input

    def cloud(n, channels, seed):
        g = torch.Generator().manual_seed(seed)
        xyz = torch.rand(1, n, 3, generator=g) * 2 - 1
        return torch.cat([xyz, torch.rand(1, n, channels, generator=g)], -1) if channels else xyz

    return [
        ("ssg", "SSG classifier (1024 points)", lambda: Pointnet2SSGCls(num_classes=40),
         lambda: cloud(1024, 0, 0)),
        ("msg_seg", "MSG segmenter (4096 points + 6 ch)", lambda: Pointnet2MSGSeg(num_classes=13),
         lambda: cloud(4096, 6, 0)),
        ("pvn3d", f"PVN3D Pointnet2MSG ({NUM_POINTS} points + 6 ch)",
         lambda: Pointnet2MSG(input_channels=6), lambda: example_input(NUM_POINTS, 0)),
    ]


def _fresh(path):
    """path exists and is newer than every source that shapes the exported model."""
    if not os.path.exists(path):
        return False
    import glob
    srcs = glob.glob(os.path.join(_ROOT, "models", "*.py"))
    srcs += glob.glob(os.path.join(_ROOT, "python", "pointrt", "**", "*.py"), recursive=True)
    srcs.append(os.path.abspath(__file__))
    return os.path.getmtime(path) > max(os.path.getmtime(p) for p in srcs)


def section_models(runner, args, results):
    rows = []
    wanted = args.models
    for key, label, ctor, make_input in model_cases():
        if key not in wanted:
            continue
        torch.manual_seed(0)
        model = randomize_batchnorm(ctor(), seed=1).eval()
        x = make_input()
        path = os.path.join(runner.workdir, f"{key}.onnx")
        t0 = time.perf_counter()
        if not args.no_cache and _fresh(path):
            how = "reused"
        else:
            pointrt.export(model, (x,), path, input_names=["points"], output_names=["out"],
                           verify=False, quiet=True)
            how = "exported"
        export_s = time.perf_counter() - t0
        xn = x.numpy()
        np.save(os.path.join(runner.workdir, f"{key}_input.npy"), xn)
        torch.set_num_threads(args.threads[0])
        t0 = time.perf_counter()
        with torch.no_grad():
            ref = model(x).numpy()
        t_first = time.perf_counter() - t0
        sessions = {t: runner.rt.Session(path, threads=t) for t in args.threads}
        got = sessions[args.threads[0]].run({"points": xn})["out"]
        ok, text = compare([ref], [got], 1e-4)
        print(f"  {label}: {how} {path} in {export_s:.1f} s, {text}", file=sys.stderr, flush=True)
        for t in args.threads:
            def torch_call():
                with torch.no_grad():
                    model(x)
            sess = sessions[t]
            tm, pm, nt, npt = runner.timer.pair(torch_call, lambda: sess.run({"points": xn}), t,
                                                True, args.model_budget,
                                                t_first if t == args.threads[0] else None)
            ratio = tm / pm
            rows.append([label, t, fmt_ms(pm), fmt_ms(tm), fmt_ratio(ratio),
                         "yes" if ratio >= 3 else "**no**", text if ok else f"**MISMATCH: {text}**",
                         f"{nt} / {npt}"])
            results["models"].append(dict(model=label, threads=t, pointrt_ms=pm, torch_ms=tm,
                                          ratio=ratio, agree=ok, check=text, torch_calls=nt,
                                          pointrt_calls=npt, onnx=path))
            print(f"  {label} threads={t}: pointrt {pm:.1f} ms, torch {tm:.1f} ms, {ratio:.1f}x",
                  file=sys.stderr, flush=True)
    table = md_table(["model", "threads", "pointrt ms", "PyTorch eager ms", "torch / pointrt",
                      ">= 3x", "outputs", "timed calls (torch / pointrt)"], rows)
    print("\n### Whole models (median latency)\n\n" + table + "\n", flush=True)


def _blas_in_use():
    torch.ones(2, 2) @ torch.ones(2, 2)
    with open("/proc/self/maps") as f:
        libs = {line.split()[-1] for line in f if "libblas" in line or "openblas" in line}
    return ", ".join(sorted(libs)) or "none loaded"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 1)[1])
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 1 thread, one round, short budgets, operators at 1/4 size "
                         "(N=4096, M=1024), scaling 4k and 8k only")
    ap.add_argument("--threads", type=int, nargs="+", default=None, help="default: 1 2")
    ap.add_argument("--sections", nargs="+", default=["ops", "scaling", "models"],
                    choices=["ops", "scaling", "models"])
    ap.add_argument("--op-filter", nargs="+", default=None,
                    help="ops section: only cases whose label contains one of these (case-insensitive)")
    ap.add_argument("--families", nargs="+", default=None,
                    help="scaling section: only these families (BallQuery, KNN, ThreeNN, "
                         "FurthestPointSample; substring match)")
    ap.add_argument("--sizes", type=int, nargs="+", default=None,
                    help="scaling section: point counts (default 4096 ... 131072, doubling)")
    ap.add_argument("--models", nargs="+", default=["ssg", "msg_seg", "pvn3d"],
                    choices=["ssg", "msg_seg", "pvn3d"])
    ap.add_argument("--rounds", type=int, default=None, help="alternating rounds (default 3)")
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds per operator case and thread count, both sides (default 4)")
    ap.add_argument("--scaling-budget", type=float, default=None,
                    help="seconds per scaling point (default 2)")
    ap.add_argument("--model-budget", type=float, default=None,
                    help="seconds per model and thread count (default 16)")
    ap.add_argument("--pt-max-calls", type=int, default=60, help="cap on timed pointrt calls")
    ap.add_argument("--torch-max-call", type=float, default=None,
                    help="scaling: skip PyTorch where one call is predicted to take longer "
                         "(seconds; default 3)")
    ap.add_argument("--omp-wait-policy", default="passive", choices=["passive", "active", "default"],
                    help="OMP_WAIT_POLICY for libgomp (torch and pointrt share it); 'default' "
                         "leaves the environment alone")
    ap.add_argument("--blas-dir", default="",
                    help="folder with another libblas.so.3 for PyTorch (e.g. OpenBLAS, see "
                         "docs/benchmarks-pointnet2.md); run with OPENBLAS_NUM_THREADS=1 "
                         "(PyTorch 1.13 only uses BLAS for convolutions at one thread)")
    ap.add_argument("--cache-dir", default=os.path.join(_ROOT, "build", "bench-pointnet2"),
                    help="where the .onnx files are written and kept (default build/bench-pointnet2); "
                         "a model file newer than models/, python/pointrt/ and this script is "
                         "reused (exporting PVN3D takes 1-2 minutes here)")
    ap.add_argument("--no-cache", action="store_true", help="always re-export the models")
    ap.add_argument("--json", default=None, help="also write the results here")
    args = ap.parse_args()
    q = args.quick
    args.threads = args.threads or ([1] if q else [1, 2])
    args.rounds = args.rounds or (1 if q else 3)
    args.budget = args.budget if args.budget is not None else (1.0 if q else 4.0)
    args.scaling_budget = args.scaling_budget if args.scaling_budget is not None else (0.5 if q else 2.0)
    args.model_budget = args.model_budget if args.model_budget is not None else (3.0 if q else 16.0)
    args.torch_max_call = args.torch_max_call if args.torch_max_call is not None else (0.5 if q else 3.0)

    st = load_runtime() if callable(load_runtime) else None
    rt = getattr(st, "module", st)
    if rt is None:
        sys.exit("pointrt._pointrt is not built (scripts/setup.sh)")

    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    header = (f"pointrt vs PyTorch {torch.__version__} (pointrt.torch.ops forward / eager), "
              f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
              f"load average at start {' '.join(load)}, OMP_WAIT_POLICY="
              f"{os.environ.get('OMP_WAIT_POLICY', '(unset)')}, threads {args.threads}, "
              f"rounds {args.rounds}{', --quick' if q else ''}, BLAS for PyTorch: "
              f"{_blas_in_use()}")
    print(f"{header}\nstarted {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}\n", flush=True)
    results = dict(header=header, load_start=load, ops=[], scaling=[], models=[])
    t_start = time.perf_counter()
    workdir = args.cache_dir
    os.makedirs(workdir, exist_ok=True)
    runner = Runner(args, rt, workdir)
    if "ops" in args.sections:
        section_ops(runner, args, results)
    if "scaling" in args.sections:
        section_scaling(runner, args, results)
    if "models" in args.sections:
        section_models(runner, args, results)
    with open("/proc/loadavg") as f:
        load_end = f.read().split()[:3]
    results["load_end"] = load_end
    print(f"finished in {time.perf_counter() - t_start:.0f} s, load average at end "
          f"{' '.join(load_end)}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
