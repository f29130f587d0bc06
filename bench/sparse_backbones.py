"""Sparse backbones and detectors side by side: pointrt vs the pure-PyTorch modules vs spconv's CPU build.

Backbones (SpMiddleResNetFHD at the nuScenes grid, VoxelBackBone8x at the KITTI grid), for each
voxel count: one synthetic scan whose voxelization gives exactly that many voxels (see
`make_scan`), one set of weights (BatchNorm statistics randomized), and three engines:
  - pointrt: the backbone exported from (features, indices), `build/pointrt bench --profile`
    (the profile splits `SparseConv:rulebook` from the convolution itself); the voxelization is
    a second exported graph (points -> Voxelize) timed the same way;
  - torch: pointrt.torch.sparse in PyTorch eager (the export side's reference), voxelization with
    `pointrt.torch.sparse.voxelize`;
  - spconv: spconv 2.x's CPU build (the `spconv` wheel), the same network rebuilt from spconv's
    classes with the same weights, on the same voxels (its voxelizer is not timed: spconv's
    PointToVoxel returns raw points per voxel, not CenterPoint's mean features).
Before any timing the three backbone outputs are compared as sets of sites: the same sites, and
features within 1e-4 of the reference's largest magnitude (PyTorch eager is the reference).
Every engine runs in its own fresh process, so the peak RSS (getrusage) is its own; the timing
is the median of --repeats runs after one warm-up, at each of --threads.

Detectors (`--detectors`): models/sparse_detectors.py second_kitti and centerpoint_nuscenes,
exported from raw points (Voxelize in the graph), `pointrt bench model.onnx --input points=scan.npy
--profile` for the split voxelize / rulebook / sparse conv / dense 2D, against PyTorch eager.

    .venv/bin/python bench/sparse_backbones.py --quick                      # smoke test, ~2 min
    .venv/bin/python bench/sparse_backbones.py --threads 1 2 --voxels 20000 60000 120000
    .venv/bin/python bench/sparse_backbones.py --detectors --threads 1 2
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "models"))
sys.path.insert(0, str(ROOT / "python"))
import lidar_synth  # noqa: E402
import sparse_detectors as sd  # noqa: E402
from pointrt.torch import sparse as sp  # noqa: E402
from pointrt.torch import _sparse_compute as sparse_compute  # noqa: E402

# name -> (detector constructor, scan preset)
BACKBONES = {
    "SpMiddleResNetFHD": (sd.centerpoint_nuscenes, "nuscenes"),
    "VoxelBackBone8x": (sd.second_kitti, "kitti"),
}
DETECTORS = {
    "centerpoint_nuscenes": (sd.centerpoint_nuscenes, "nuscenes"),
    "second_kitti": (sd.second_kitti, "kitti"),
}
TOLERANCE = 1e-4  # max |got - ref| / max |ref|
BLAS_DIR = ""  # --blas-dir
BUDGET_S = 20.0  # --budget-s
REPEATS = 5  # --repeats
WAIT_POLICY = "passive"  # --omp-wait-policy (pointrt)
PEER_WAIT_POLICY = "passive"  # --peer-omp-wait-policy (PyTorch, spconv)


def wait_policy_env(env: Dict[str, str], policy: str) -> Dict[str, str]:
    """OMP_WAIT_POLICY for an engine's process ("default": whatever the environment says)."""
    if policy != "default":
        env["OMP_WAIT_POLICY"] = policy
    return env


# --------------------------------------------------------------------------- scans
_SCANS: Dict[Tuple[str, int], np.ndarray] = {}


def dense_scan(preset: str, beam_factor: int) -> np.ndarray:
    """A scan of the preset with `beam_factor` times the beams (a denser sensor), 120 objects."""
    key = (preset, beam_factor)
    if key not in _SCANS:
        base = lidar_synth.PRESETS[preset]
        name = f"{preset}_x{beam_factor}"
        lidar_synth.PRESETS[name] = dataclasses.replace(base, beams=base.beams * beam_factor)
        _SCANS[key] = lidar_synth.synth_scan(name, seed=1, boxes=120)
    return _SCANS[key]


def voxel_first_points(scan: np.ndarray, det: sd.SparseDetector) -> np.ndarray:
    """Index of the first point of each non-empty voxel, ascending (the voxelizer's numbering)."""
    feats, coords, _ = sp.voxelize(torch.from_numpy(scan), det.voxel_size, det.point_cloud_range, 1, 10**8)
    # feats of a 1-point voxel is its first point: find it back by the voxel's order of appearance.
    lo = np.array(det.point_cloud_range[:3], np.float32)
    size = np.array(det.voxel_size, np.float32)
    cell = np.floor((scan[:, :3] - lo) / size).astype(np.int64)
    grid = np.array(sp.voxel_grid_shape(det.voxel_size, det.point_cloud_range), np.int64)
    inside = np.all((scan[:, :3] >= lo) & (scan[:, :3] < np.array(det.point_cloud_range[3:], np.float32)), axis=1)
    inside &= np.all((cell >= 0) & (cell < grid), axis=1)
    keys = (cell[:, 2] * grid[1] + cell[:, 1]) * grid[0] + cell[:, 0]
    keys = np.where(inside, keys, -1)
    _, first = np.unique(keys, return_index=True)
    first = np.sort(first[keys[first] >= 0])
    if first.shape[0] != feats.shape[0]:
        raise RuntimeError(f"voxel count mismatch: numpy {first.shape[0]} vs voxelize {feats.shape[0]}")
    return first


def make_scan(preset: str, det: sd.SparseDetector, count: int) -> np.ndarray:
    """A scan whose voxelization has exactly `count` voxels (a few more at most, never fewer).

    The smallest beam factor (1, 2, 4, 8, 16) whose scan has >= 1.02 * count voxels is taken (topped
    up with uniform clutter points when even 16x falls short), its points are shuffled (a uniform random
    dropout, which keeps the ring/object structure everywhere) and cut just after the point that
    opens the count-th voxel."""
    for factor in (1, 2, 4, 8, 16):
        scan = dense_scan(preset, factor)
        first = voxel_first_points(scan, det)
        if first.shape[0] >= 1.02 * count:
            break
    print(f"scan for {count} voxels: {preset} with {factor}x the beams ({first.shape[0]} voxels before the cut)",
          file=sys.stderr, flush=True)
    rng = np.random.default_rng(count)
    if first.shape[0] < 1.02 * count:
        p = lidar_synth.PRESETS[preset]
        n = int(2 * (1.02 * count - first.shape[0])) + 1000
        clutter = np.stack([rng.uniform(p.area[0], p.area[1], n), rng.uniform(p.area[2], p.area[3], n),
                            rng.uniform(-p.sensor_height, -p.sensor_height + 2.5, n), rng.uniform(0, 0.5, n)] +
                           ([rng.integers(0, p.beams, n).astype(np.float64)] if p.fields == 5 else []), axis=1)
        scan = np.concatenate([scan, clutter.astype(np.float32)])
    scan = scan[rng.permutation(scan.shape[0])]
    first = voxel_first_points(scan, det)
    return np.ascontiguousarray(scan[: first[count - 1] + 1])


# --------------------------------------------------------------------------- spconv conversion
def convert_to_spconv(module: nn.Module, spconv_pytorch) -> nn.Module:
    """The same network built from spconv's classes, with the same weights."""
    if isinstance(module, sp.SparseConvolution):
        c = module
        if c.inverse:
            new = spconv_pytorch.SparseInverseConv3d(c.in_channels, c.out_channels, c.kernel_size,
                                                     indice_key=c.indice_key, bias=c.bias is not None)
        else:
            cls = spconv_pytorch.SubMConv3d if c.subm else (spconv_pytorch.SparseConvTranspose3d if c.transposed
                                                            else spconv_pytorch.SparseConv3d)
            new = cls(c.in_channels, c.out_channels, c.kernel_size, stride=c.stride, padding=c.padding,
                      dilation=c.dilation, bias=c.bias is not None, indice_key=c.indice_key or None)
        with torch.no_grad():  # both use spconv 2.x's [Cout, k0, k1, k2, Cin] layout
            assert new.weight.shape == c.weight.shape, (new.weight.shape, c.weight.shape)
            new.weight.copy_(c.weight)
            if c.bias is not None:
                new.bias.copy_(c.bias)
        return new
    if isinstance(module, sd.SparseBasicBlock):
        return SpconvBasicBlock(module, spconv_pytorch)
    if isinstance(module, sp.SparseSequential):
        return spconv_pytorch.SparseSequential(*[convert_to_spconv(m, spconv_pytorch) for m in module])
    if isinstance(module, (sd.SpMiddleResNetFHD, sd.VoxelBackBone8x)):
        for name, child in list(module.named_children()):
            setattr(module, name, convert_to_spconv(child, spconv_pytorch))
        return module
    return module  # BatchNorm1d, ReLU: spconv's SparseSequential applies them to the features


def SpconvBasicBlock(block: "sd.SparseBasicBlock", spconv_pytorch) -> nn.Module:
    """det3d's SparseBasicBlock as a spconv SparseModule (spconv's SparseSequential would otherwise
    hand a non-spconv module the bare feature matrix)."""

    class _Block(spconv_pytorch.SparseModule):
        def __init__(self):
            super().__init__()
            self.conv1 = convert_to_spconv(block.conv1, spconv_pytorch)
            self.bn1, self.relu = block.bn1, block.relu
            self.conv2 = convert_to_spconv(block.conv2, spconv_pytorch)
            self.bn2 = block.bn2

        def forward(self, x):
            out = self.conv1(x)
            out = out.replace_feature(self.relu(self.bn1(out.features)))
            out = self.conv2(out)
            out = out.replace_feature(self.bn2(out.features))
            return out.replace_feature(self.relu(out.features + x.features))

    return _Block()



# --------------------------------------------------------------------------- work and the compute bound
def count_conv_flops(det: sd.SparseDetector, feats: torch.Tensor, coords: torch.Tensor) -> int:
    """Floating-point operations of the backbone's convolutions: 2 * pairs * Cin * Cout summed over
    layers, the work every gather-GEMM-scatter engine must do. The rulebooks are built for real; the
    products are skipped (zeros are returned), since the sites never depend on the features."""
    total = [0]
    original = sparse_compute.apply_pairs

    def counting(features, weight, pairs, n_out, reverse):
        total[0] += 2 * sum(int(src.numel()) for src, _ in pairs) * features.shape[1] * weight.shape[0]
        return features.new_zeros((n_out, weight.shape[0]))

    sparse_compute.apply_pairs = counting
    try:
        with torch.no_grad():
            det.backbone(sp.SparseConvTensor(feats, coords, det.sparse_shape, 1))
    finally:
        sparse_compute.apply_pairs = original
    return total[0]


GEMM_SHAPES = [(16384, 64, 64), (16384, 128, 128)]  # (rows, Cin, Cout): the backbones' channel widths


def gemm_model(tmpd: Path, k: int, n: int) -> Path:
    """A one-MatMul ONNX file [M, k] x [k, n] (weights as an initializer, like a packed conv weight)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((k, n)).astype(np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["a", "w"], ["y"])], "gemm",
                              [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["M", k])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["M", n])], [w])
    path = tmpd / f"gemm_{k}x{n}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


def gemm_peak(tmpd: Path, threads: int, repeats: int) -> Dict[str, float]:
    """GFLOP/s of a plain dense GEMM at the backbones' channel widths, for pointrt (oneDNN, through
    `pointrt bench` on a MatMul model) and for PyTorch's torch.mm with the BLAS its processes use:
    the rate a convolution engine could reach at best on this machine. Best of the shapes."""
    best = {"pointrt": 0.0, "torch": 0.0}
    for m, k, n in GEMM_SHAPES:
        a = tmpd / f"gemm_a_{k}.npy"
        np.save(a, np.random.default_rng(1).standard_normal((m, k)).astype(np.float32))
        r = run_pointrt(gemm_model(tmpd, k, n), [f"a={a}"], threads, max(repeats, 10))
        if "median_ms" in r:
            best["pointrt"] = max(best["pointrt"], 2 * m * k * n / r["median_ms"] / 1e6)
        t = run_child("gemm", a, a, threads, max(repeats, 10))
        if "median_ms" in t:
            best["torch"] = max(best["torch"], 2 * m * k * n / t["median_ms"] / 1e6)
    return best


# --------------------------------------------------------------------------- child processes
def child_main(args) -> None:
    """In a fresh process: run one engine on saved inputs, write its outputs, print timings as JSON."""
    torch.set_num_threads(args.threads)
    det = None if args.child == "gemm" else torch.load(args.model)
    data = None if args.child == "gemm" else np.load(args.data)
    times: List[float] = []
    extra: Dict[str, float] = {}
    if args.child == "gemm":  # --data is the [M, k] matrix; square weights
        a = torch.from_numpy(np.load(args.data))
        w = torch.randn(a.shape[1], a.shape[1])

        def run():
            return torch.mm(a, w)
    elif args.child == "voxelize":
        points = torch.from_numpy(data["points"])

        def run():
            return sp.voxelize(points, det.voxel_size, det.point_cloud_range, det.max_points_per_voxel, det.max_voxels)
    elif args.child == "detector":
        points = torch.from_numpy(data["points"])

        def run():
            return det(points)
    else:
        feats, coords = torch.from_numpy(data["features"]), torch.from_numpy(data["indices"])
        if args.child == "spconv":
            import spconv.pytorch as spconv_pytorch
            net = convert_to_spconv(det.backbone, spconv_pytorch).eval()

            def run():
                y = net(spconv_pytorch.SparseConvTensor(feats, coords, det.sparse_shape, 1))
                return y.features, y.indices
        else:
            net = det.backbone

            def run():
                y = net(sp.SparseConvTensor(feats, coords, det.sparse_shape, 1))
                return y.features, y.indices
    with torch.no_grad():
        extra["rss_before_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t = time.perf_counter()
        out = run()
        warm_ms = (time.perf_counter() - t) * 1000
        # Slow engines get fewer timed runs: as many as fit in --budget-s seconds; when even the
        # warm-up run took longer than that, it is the one measurement (its one-time costs are
        # small next to such a run time) and the table says "(1 run)".
        repeats = min(args.repeats, int(args.budget_s * 1000 / warm_ms))
        extra["runs"] = max(1, repeats)
        for _ in range(repeats):
            t = time.perf_counter()
            run()
            times.append((time.perf_counter() - t) * 1000)
    if args.out:
        if args.child == "detector":
            np.savez(args.out, **{n: o.numpy() for n, o in zip(sd.OUTPUT_NAMES, out)})
        elif args.child != "voxelize":
            np.savez(args.out, features=out[0].numpy(), indices=out[1].numpy().astype(np.int32))
    if not times:
        times = [warm_ms]
    print(json.dumps({"median_ms": statistics.median(times), "min_ms": min(times),
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, **extra}))


# Children are started through `sh -c '"$@" & wait'`: a process forked straight from this (large)
# Python process starts with its resident set as the high-water mark, and Linux keeps that mark
# across exec, so getrusage's peak RSS would report the parent's size. A fork of a fresh sh does not.
FRESH = ["/bin/sh", "-c", '"$@" & wait $!', "sh"]


def run_child(kind: str, data: Path, model: Path, threads: int, repeats: int, out: Optional[Path] = None) -> Dict:
    cmd = [sys.executable, __file__, "--child", kind, "--data", str(data), "--model", str(model),
           "--threads", str(threads), "--repeats", str(repeats), "--budget-s", str(BUDGET_S)] + \
        (["--out", str(out)] if out else [])
    env = wait_policy_env(dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads)),
                          PEER_WAIT_POLICY)
    if BLAS_DIR:  # e.g. OpenBLAS instead of Debian's default reference BLAS, for PyTorch and spconv only
        env["LD_LIBRARY_PATH"] = BLAS_DIR + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    res = subprocess.run(FRESH + cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        lines = res.stderr.strip().splitlines()
        return {"error": lines[-1] if lines else f"exit {res.returncode}"}
    result = json.loads(res.stdout.strip().splitlines()[-1])
    if out is not None:
        result["wrote"] = str(out)
    return result


def pointrt_cli() -> str:
    return os.environ.get("POINTRT_CLI", str(ROOT / "build" / "pointrt"))


def parse_profile(text: str) -> Dict[str, float]:
    """`bench --profile`'s "per operator" block -> {op: mean ms per run}."""
    ops: Dict[str, float] = {}
    block = text.split("per operator", 1)[1].split("slowest nodes", 1)[0] if "per operator" in text else ""
    for line in block.splitlines()[1:]:
        m = re.match(r"\s+(\S+)\s+([0-9.]+)\s+[0-9.]+%", line)
        if m:
            ops[m.group(1)] = float(m.group(2))
    return ops


def run_pointrt(onnx_path: Path, inputs: List[str], threads: int, repeats: int) -> Dict:
    with tempfile.TemporaryDirectory() as d:
        summary = Path(d) / "s.json"
        cmd = [pointrt_cli(), "bench", str(onnx_path), "--threads", str(threads), "--warmup", "1",
               "--iterations", str(repeats), "--json", str(summary), "--profile"]
        for i in inputs:
            cmd += ["--input", i]
        env = wait_policy_env(dict(os.environ, OMP_NUM_THREADS=str(threads)), WAIT_POLICY)
        res = subprocess.run(FRESH + cmd, capture_output=True, text=True, env=env)
        if res.returncode != 0:
            return {"error": (res.stderr.strip() or res.stdout.strip())[-300:]}
        result = json.loads(summary.read_text())
        result["ops"] = parse_profile(res.stdout)
        result["command"] = " ".join(cmd[:2] + ["model.onnx"] + cmd[3:cmd.index("--json")] + cmd[cmd.index("--json") + 2:])
        return result


def run_pointrt_outputs(onnx_path: Path, inputs: List[str], out_dir: Path, threads: int) -> Dict[str, np.ndarray]:
    out_dir.mkdir(exist_ok=True)
    for p in out_dir.glob("*.npy"):
        p.unlink()
    cmd = [pointrt_cli(), "run", str(onnx_path), "--output-dir", str(out_dir), "--threads", str(threads)]
    for i in inputs:
        cmd += ["--input", i]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return {p.stem: np.load(p) for p in out_dir.glob("*.npy")}


# --------------------------------------------------------------------------- checks
def relative_error(got: np.ndarray, ref: np.ndarray) -> float:
    return float(np.abs(got.astype(np.float64) - ref).max() / max(np.abs(ref).max(), 1e-12)) if ref.size else 0.0


def compare_sparse(got_f: np.ndarray, got_i: np.ndarray, ref_f: np.ndarray, ref_i: np.ndarray) -> str:
    """'' when the two sparse tensors hold the same sites with features within TOLERANCE, else why not."""
    if got_i.shape != ref_i.shape:
        return f"{got_i.shape[0]} sites vs {ref_i.shape[0]}"

    def order(idx):
        return np.lexsort(idx.T[::-1])

    g, r = order(got_i), order(ref_i)
    if not np.array_equal(got_i[g], ref_i[r]):
        return "different sites"
    err = relative_error(got_f[g], ref_f[r])
    return "" if err <= TOLERANCE else f"features differ: {err:.2e} relative"


# --------------------------------------------------------------------------- benchmarks
class Backbone(nn.Module):
    def __init__(self, det: sd.SparseDetector):
        super().__init__()
        self.det = det

    def forward(self, features: torch.Tensor, indices: torch.Tensor):
        x = self.det.backbone(sp.SparseConvTensor(features, indices, self.det.sparse_shape, 1))
        return x.features, x.indices


class VoxelizeOnly(nn.Module):
    def __init__(self, det: sd.SparseDetector):
        super().__init__()
        self.det = det

    def forward(self, points: torch.Tensor):
        f, c, n = sp.voxelize(points, self.det.voxel_size, self.det.point_cloud_range, self.det.max_points_per_voxel,
                              self.det.max_voxels)
        return f, c, n


def export(module: nn.Module, args: Tuple, path: Path, inputs: List[str], outputs: List[str]) -> Path:
    torch.onnx.export(module, args, str(path), input_names=inputs, output_names=outputs, opset_version=13,
                      custom_opsets={"pointrt": 1}, dynamic_axes={n: {0: "N"} for n in inputs})
    return path


def fmt(r: Dict, key: str = "median_ms") -> str:
    """Median ms; '(1 run)' etc. when the time budget cut the runs short."""
    if key not in r:
        return "n/a"
    runs = r.get("runs")
    return f"{r[key]:.1f}" + (f" ({runs} run{'s' if runs != 1 else ''})" if runs is not None and runs < REPEATS else "")


def bench_backbones(args, tmpd: Path, log) -> List[Dict]:
    results = []
    for name in args.backbones:
        ctor, preset = BACKBONES[name]
        torch.manual_seed(0)
        det = sd.randomize_batchnorm(ctor(max_voxels=10**7)).eval()
        for count in args.voxels:
            scan = make_scan(preset, det, count)
            det.max_voxels = count
            model_pt = tmpd / f"{name}_{count}.pt"
            torch.save(det, model_pt)
            with torch.no_grad():
                feats, coords, _ = sp.voxelize(torch.from_numpy(scan), det.voxel_size, det.point_cloud_range,
                                               det.max_points_per_voxel, count)
            data = tmpd / f"{name}_{count}.npz"
            np.savez(data, features=feats.numpy(), indices=coords.numpy(), points=scan)
            np.save(tmpd / "points.npy", scan)
            bb_onnx = export(Backbone(det).eval(), (feats, coords), tmpd / f"{name}_{count}.onnx",
                             ["features", "indices"], ["out_features", "out_indices"])
            vx_onnx = export(VoxelizeOnly(det).eval(), (torch.from_numpy(scan),), tmpd / f"{name}_{count}_vox.onnx",
                             ["points"], ["voxel_features", "coords", "num_points"])
            gflop = count_conv_flops(det, feats, coords) / 1e9
            np.save(tmpd / "features.npy", feats.numpy())
            np.save(tmpd / "indices.npy", coords.numpy())
            bb_inputs = [f"features={tmpd / 'features.npy'}", f"indices={tmpd / 'indices.npy'}"]
            vx_inputs = [f"points={tmpd / 'points.npy'}"]

            # The three outputs must agree. The first --threads setting's PyTorch and spconv processes
            # also write their outputs (one process fewer each at these run times); nothing is reported
            # for a size whose check fails.
            ref_npz, spc_npz = tmpd / "out_torch.npz", tmpd / "out_spconv.npz"
            for i, threads in enumerate(args.threads):
                row = {"backbone": name, "voxels": int(feats.shape[0]), "points": int(scan.shape[0]), "threads": threads,
                       "conv_gflop": gflop}
                torch_npz = ref_npz if i == 0 else tmpd / "out_torch_t.npz"
                row["torch"] = run_child("torch", data, model_pt, threads, args.repeats, torch_npz)
                row["spconv"] = run_child("spconv", data, model_pt, threads, args.repeats, spc_npz)
                if "error" in row["torch"]:
                    raise RuntimeError(f"{name} {count}: PyTorch eager failed: {row['torch']['error']}")
                if i == 0:
                    ref_out = np.load(ref_npz)
                    out_sites = int(ref_out["indices"].shape[0])
                # Every process's output is compared with the first PyTorch process's.
                prt_out = run_pointrt_outputs(bb_onnx, bb_inputs, tmpd / "prt_out", threads)
                check = {"pointrt": compare_sparse(prt_out["out_features"], prt_out["out_indices"],
                                                   ref_out["features"], ref_out["indices"])}
                if i > 0:
                    o = np.load(torch_npz)
                    check["torch"] = compare_sparse(o["features"], o["indices"], ref_out["features"], ref_out["indices"])
                if "error" in row["spconv"]:
                    check["spconv"] = f"spconv failed: {row['spconv']['error']}"
                else:
                    o = np.load(spc_npz)
                    check["spconv"] = compare_sparse(o["features"], o["indices"], ref_out["features"], ref_out["indices"])
                row["check"] = check
                if check["spconv"] and "error" not in row["spconv"]:
                    row["spconv"]["wrong_output"] = check["spconv"]
                log(f"{name} {count} voxels ({scan.shape[0]} points, output {out_sites} sites), {threads} threads: " +
                    "; ".join(f"{k} vs PyTorch: {v or 'same'}" for k, v in check.items()))
                if check["pointrt"] or check.get("torch"):
                    raise RuntimeError(f"{name} {count}: outputs differ: {check}")
                row["out_sites"] = out_sites
                row["pointrt"] = run_pointrt(bb_onnx, bb_inputs, threads, args.repeats)
                row["pointrt_vox"] = run_pointrt(vx_onnx, vx_inputs, threads, args.repeats)
                row["torch_vox"] = run_child("voxelize", data, model_pt, threads, args.repeats)
                results.append(row)
                log(backbone_row(row))
    return results


def backbone_row(r: Dict) -> str:
    p, t, s = r["pointrt"], r["torch"], r["spconv"]
    ops = p.get("ops", {})
    rb = ops.get("SparseConv:rulebook", 0.0)
    conv = ops.get("SparseConv", 0.0)

    def ratio(x):
        return f"{x['median_ms'] / p['median_ms']:.1f}x" if "median_ms" in x and "median_ms" in p else "n/a"

    def rss(x):
        return f"{x['peak_rss_mib']:.0f}" if "peak_rss_mib" in x else "n/a"

    return (f"| {r['backbone']} | {r['voxels']} | {r['threads']} | {fmt(r['pointrt_vox'])} | {rb:.1f} | {conv:.1f} | "
            f"{fmt(p)} | {fmt(r['torch_vox'])} | {fmt(t)} | {ratio(t)} | "
            f"{fmt(s)}{' (wrong output)' if s.get('wrong_output') else ''} | {ratio(s)} | "
            f"{rss(p)} / {rss(t)} / {rss(s)} |")


BACKBONE_HEADER = ("| backbone | voxels | threads | pointrt voxelize ms | pointrt rulebook ms | pointrt conv ms | "
                   "pointrt backbone ms | PyTorch voxelize ms | PyTorch backbone ms | PyTorch / pointrt | "
                   "spconv backbone ms | spconv / pointrt | peak RSS MiB pointrt / PyTorch / spconv |\n"
                   "|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def bound_table(rows: List[Dict], peaks: Dict[int, Dict[str, float]]) -> str:
    """How far each engine is from the machine's dense-GEMM rate, and the largest speed-up over
    PyTorch that any engine doing the same multiply-adds at that rate could show."""
    lines = ["| backbone | voxels | threads | conv GFLOP | pointrt conv GFLOP/s | PyTorch backbone GFLOP/s | "
             "dense GEMM GFLOP/s oneDNN / PyTorch's BLAS | pointrt conv at the oneDNN rate ms | PyTorch ms / 10 | "
             "largest possible PyTorch / pointrt |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        peak = peaks.get(r["threads"], {})
        conv_ms = r["pointrt"].get("ops", {}).get("SparseConv", 0.0)
        t_ms = r["torch"].get("median_ms")
        g = r.get("conv_gflop", 0.0)
        if not (g and conv_ms and t_ms and peak.get("pointrt")):
            continue
        floor_ms = g / peak["pointrt"] * 1000
        lines.append(f"| {r['backbone']} | {r['voxels']} | {r['threads']} | {g:.2f} | {g / conv_ms * 1000:.0f} | "
                     f"{g / t_ms * 1000:.0f} | {peak['pointrt']:.0f} / {peak['torch']:.0f} | {floor_ms:.1f} | "
                     f"{t_ms / 10:.1f} | {t_ms / floor_ms:.1f}x |")
    return "\n".join(lines)


def scaling_table(rows: List[Dict]) -> str:
    """Time per 1000 voxels at each size, and largest/smallest time over largest/smallest voxel count
    (1.00 = exactly linear)."""
    lines = ["| backbone | threads | engine | ms per 1k voxels (by voxel count) | growth vs linear |", "|---|---|---|---|---|"]
    keys = sorted({(r["backbone"], r["threads"]) for r in rows})
    for name, threads in keys:
        sel = sorted((r for r in rows if r["backbone"] == name and r["threads"] == threads), key=lambda r: r["voxels"])
        for engine in ("pointrt", "torch", "spconv"):
            pts = [(r["voxels"], r[engine]["median_ms"]) for r in sel if "median_ms" in r[engine]]
            if len(pts) < 2:
                continue
            per = ", ".join(f"{v // 1000}k: {ms / v * 1000:.2f}" for v, ms in pts)
            growth = (pts[-1][1] / pts[0][1]) / (pts[-1][0] / pts[0][0])
            lines.append(f"| {name} | {threads} | {engine} | {per} | {growth:.2f} |")
    return "\n".join(lines)


def bench_detectors(args, tmpd: Path, log) -> List[Dict]:
    results = []
    for name in args.detector_names:
        ctor, preset = DETECTORS[name]
        torch.manual_seed(0)
        det = sd.randomize_batchnorm(ctor()).eval()
        for count in args.detector_voxels:
            if count > det.max_voxels:
                continue
            scan = make_scan(preset, det, count)
            model_pt = tmpd / f"{name}.pt"
            torch.save(det, model_pt)
            data = tmpd / f"{name}_{count}.npz"
            np.savez(data, points=scan)
            scan_npy = tmpd / f"{name}_{count}_scan.npy"
            np.save(scan_npy, scan)
            onnx_path = export(det, (torch.from_numpy(scan),), tmpd / f"{name}.onnx", ["points"], sd.OUTPUT_NAMES)
            got = run_pointrt_outputs(onnx_path, [f"points={scan_npy}"], tmpd / f"{name}_out", args.threads[0])
            ref_npz = tmpd / f"{name}_ref.npz"
            worst = None
            for i, threads in enumerate(args.threads):
                row = {"detector": name, "voxels": count, "points": int(scan.shape[0]), "threads": threads}
                row["torch"] = run_child("detector", data, model_pt, threads, args.repeats, ref_npz if i == 0 else None)
                if i == 0:  # the first PyTorch process also wrote its outputs: check pointrt's
                    if "error" in row["torch"]:
                        raise RuntimeError(f"{name}: PyTorch eager failed: {row['torch']['error']}")
                    ref = np.load(ref_npz)
                    worst = max(relative_error(got[n], ref[n]) for n in sd.OUTPUT_NAMES)
                    log(f"{name} {count} voxels ({scan.shape[0]} points): pointrt vs PyTorch, worst output "
                        f"{worst:.2e} relative")
                    if worst > TOLERANCE:
                        raise RuntimeError(f"{name}: pointrt differs from PyTorch ({worst:.2e})")
                row["max_rel_err"] = worst
                row["pointrt"] = run_pointrt(onnx_path, [f"points={scan_npy}"], threads, args.repeats)
                results.append(row)
                log(detector_row(row))
    return results


def detector_row(r: Dict) -> str:
    p, t = r["pointrt"], r["torch"]
    ops = p.get("ops", {})
    vox = ops.get("Voxelize", 0.0)
    rb = ops.get("SparseConv:rulebook", 0.0)
    conv = ops.get("SparseConv", 0.0)
    scatter = ops.get("ScatterDense", 0.0)
    dense = sum(v for k, v in ops.items() if k not in ("Voxelize", "SparseConv:rulebook", "SparseConv", "ScatterDense"))
    ratio = f"{t['median_ms'] / p['median_ms']:.1f}x" if "median_ms" in t and "median_ms" in p else "n/a"
    rss = " / ".join(f"{x['peak_rss_mib']:.0f}" if "peak_rss_mib" in x else "n/a" for x in (p, t))
    return (f"| {r['detector']} | {r['voxels']} | {r['points']} | {r['threads']} | {vox:.1f} | {rb:.1f} | {conv:.1f} | "
            f"{scatter:.1f} | {dense:.1f} | {fmt(p)} | {fmt(t)} | {ratio} | {rss} |")


DETECTOR_HEADER = ("| detector | voxels | points | threads | voxelize ms | rulebook ms | sparse conv ms | ScatterDense ms | "
                   "dense 2D ms | pointrt total ms | PyTorch eager ms | PyTorch / pointrt | peak RSS MiB pointrt / PyTorch |\n"
                   "|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--voxels", type=int, nargs="+", default=[20000, 60000, 120000])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per process (after one warm-up)")
    ap.add_argument("--backbones", nargs="*", default=sorted(BACKBONES), choices=sorted(BACKBONES))
    ap.add_argument("--detectors", action="store_true", help="also (or, with --backbones, only) the full detectors")
    ap.add_argument("--detector-names", nargs="+", default=sorted(DETECTORS), choices=sorted(DETECTORS))
    ap.add_argument("--detector-voxels", type=int, nargs="+", default=[20000, 60000])
    ap.add_argument("--quick", action="store_true", help="smoke test: 5k voxels, 2 threads, 2 repeats")
    ap.add_argument("--json", help="write every measurement here")
    ap.add_argument("--blas-dir", default=os.environ.get("POINTRT_BENCH_BLAS_DIR", ""),
                    help="a folder with another libblas.so.3 (e.g. OpenBLAS) for the PyTorch and spconv processes")
    ap.add_argument("--budget-s", type=float, default=20.0,
                    help="PyTorch/spconv: fewer timed runs (at least one) when --repeats would take longer")
    ap.add_argument("--omp-wait-policy", default="passive", choices=["passive", "active", "default"],
                    help="OMP_WAIT_POLICY for pointrt. passive: for a machine whose cores are busy with other "
                         "work (a spinning thread would wait for a core); active: for an idle machine (a "
                         "sleeping thread of an idle VM takes tens of microseconds to wake per parallel region)")
    ap.add_argument("--peer-omp-wait-policy", default="passive", choices=["passive", "active", "default"],
                    help="OMP_WAIT_POLICY for the PyTorch and spconv processes (passive suits them even on an "
                         "idle machine: their OpenMP and OpenBLAS thread pools spin against each other)")
    ap.add_argument("--child", choices=["torch", "spconv", "voxelize", "detector", "gemm"], help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        args.threads = args.threads[0]
        child_main(args)
        return
    global BLAS_DIR, BUDGET_S, REPEATS, WAIT_POLICY, PEER_WAIT_POLICY
    if args.quick:
        args.voxels, args.detector_voxels, args.threads, args.repeats = [5000], [5000], [2], 2
    BLAS_DIR, BUDGET_S, REPEATS = args.blas_dir, args.budget_s, args.repeats
    WAIT_POLICY, PEER_WAIT_POLICY = args.omp_wait_policy, args.peer_omp_wait_policy
    if not Path(pointrt_cli()).exists():
        sys.exit(f"{pointrt_cli()} not found: build it first (scripts/setup.sh) or set POINTRT_CLI")

    def log(msg: str) -> None:
        print(msg, flush=True)

    log(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.2f}, "
        f"torch {torch.__version__}, BLAS for PyTorch/spconv: {BLAS_DIR or 'the system libblas.so.3'}, "
        f"OMP_WAIT_POLICY pointrt {WAIT_POLICY}, PyTorch/spconv {PEER_WAIT_POLICY}")
    out: Dict[str, List[Dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmpd = Path(tmp)
        if args.backbones:
            out["gemm_peak"] = {t: gemm_peak(tmpd, t, args.repeats) for t in args.threads}
            for t, pk in out["gemm_peak"].items():
                log(f"dense GEMM, {t} thread(s): oneDNN via pointrt {pk['pointrt']:.0f} GFLOP/s, "
                    f"PyTorch torch.mm {pk['torch']:.0f} GFLOP/s")
            log(BACKBONE_HEADER)
            out["backbones"] = bench_backbones(args, tmpd, log)
        if args.detectors:
            log(DETECTOR_HEADER)
            out["detectors"] = bench_detectors(args, tmpd, log)
    if out.get("backbones"):
        print("\n" + BACKBONE_HEADER)
        print("\n".join(backbone_row(r) for r in out["backbones"]))
    if out.get("backbones"):
        print("\n" + bound_table(out["backbones"], out["gemm_peak"]))
    if out.get("backbones") and len(args.voxels) > 1:
        print("\n" + scaling_table(out["backbones"]))
    if out.get("detectors"):
        print("\n" + DETECTOR_HEADER)
        print("\n".join(detector_row(r) for r in out["detectors"]))
    print(f"\nmedian of {args.repeats} runs after one warm-up, each engine in its own process; "
          f"load average at the end {os.getloadavg()[0]:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
