"""Trains the 6D pose demo: a reduced PVN3D on synthetic RGB-D frames (models/pose_synth.py), then
exports it with the pose step (MeanShift + RigidFit) as one file: frame in, poses out.

    nice -n 10 python models/train_pose_demo.py [--minutes 30] [--threads 2] [--out models/demo_pose]

Frames: objects resting on a table (`--layout tabletop`); keypoint targets of the symmetric shapes
from their canonical pose (`--targets symmetric`); docs/pipelines.md measures each choice.

The network keeps PVN3D's structure at reduced width: a CNN with pyramid pooling (1, 2, 3, 6) and
upsampling stages for the image, a PointNet++ MSG for the cloud (xyz + colour + normal), the
`choose` gather, a DenseFusion-style fusion and the three heads (segmentation, 8 keypoint offsets,
the centre offset); PVN3D's losses (cross entropy, L1 offsets on object points). Writes
`pose_demo.onnx`, `pose_demo.pt` (state_dict), `scene.npz` (camera, model points and keypoints,
diameters: what `pointrt run --eval/--render` need) and `training.json` (settings, wall time,
load average, loss curve, the held-out check of --eval-frames frames).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Dict, List, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, ROOT)

from models import pose_synth as ps  # noqa: E402
from models.common import demo_cache_path, training_clock, write_training_record  # noqa: E402
from pointrt.torch import pose as pose_ops  # noqa: E402
from pointrt.torch import ops  # noqa: E402
from pointrt.torch.pointnet2 import PointnetFPModule, PointnetSAModuleMSG  # noqa: E402

NUM_POINTS = 3072
INPUT_NAMES = ["rgb", "cloud", "choose"]
OUTPUT_NAMES = ["poses", "pose_status", "labels"]


def _conv_bn(c_in: int, c_out: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class ImageBranch(nn.Module):
    """Stride-8 CNN, PSP pyramid pooling (1, 2, 3, 6), three x2 upsampling stages -> [B, 32, H, W]."""

    def __init__(self, width: int = 64, out: int = 32, sizes=(1, 2, 3, 6)):
        super().__init__()
        self.feats = nn.Sequential(_conv_bn(3, 16, 2), _conv_bn(16, 32, 2), _conv_bn(32, width, 2), _conv_bn(width, width))
        self.stages = nn.ModuleList([nn.Sequential(nn.AdaptiveAvgPool2d(s), nn.Conv2d(width, 16, 1, bias=False))
                                     for s in sizes])
        self.bottleneck = nn.Sequential(nn.Conv2d(width + 16 * len(sizes), width, 1), nn.ReLU(inplace=True))
        # The last stage (full resolution) is 1x1, the reduction that matters most for CPU training.
        self.up = nn.ModuleList([_conv_bn(width, 48), _conv_bn(48, out),
                                 nn.Sequential(nn.Conv2d(out, out, 1, bias=False), nn.BatchNorm2d(out), nn.ReLU(True))])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f = self.feats(x)
        h, w = f.shape[2], f.shape[3]
        pyramid = [F.interpolate(s(f), size=(h, w), mode="bilinear", align_corners=False) for s in self.stages]
        p = self.bottleneck(torch.cat(pyramid + [f], 1))
        for stage in self.up:
            p = stage(F.interpolate(p, scale_factor=2, mode="bilinear", align_corners=True))
        return p


SA_SPECS = [(512, [0.015, 0.03], [16, 32]), (128, [0.03, 0.06], [16, 32]), (32, [0.06, 0.12], [16, 16])]


class PointBranch(nn.Module):
    """PointNet++ MSG: 512 / 128 / 32 centres, 3 FP levels back to every point -> [B, 64, N].

    forward(cloud) runs the pointrt.torch.pointnet2 modules (the exported path). Training passes
    `geometry` (the sampling and neighbour indices, which depend only on xyz, computed once per
    frame by the pointrt runtime: see Geometry): the same arithmetic with the indices given, since
    the pure-PyTorch ball query and FPS are far too slow for training on a CPU
    (tests/python/test_pose_demo.py checks that both paths agree)."""

    def __init__(self, extra: int = 6, normalize_xyz: bool = True):
        super().__init__()
        widths = [[[extra, 16, 32], [extra, 32, 32]], [[64, 64, 64], [64, 64, 64]], [[128, 128, 128], [128, 128, 128]]]
        self.sa = nn.ModuleList([PointnetSAModuleMSG(npoint=n, radii=r, nsamples=k, mlps=w)
                                 for (n, r, k), w in zip(SA_SPECS, widths)])
        # VoteNet's option: neighbours' relative xyz in units of the ball's radius, so the
        # geometry enters the first layer at the scale of the colour and normal channels.
        self.normalize_xyz = normalize_xyz
        for sa in self.sa:
            for grouper in sa.groupers:
                grouper.normalize_xyz = normalize_xyz
        self.fp = nn.ModuleList([PointnetFPModule(mlp=[64 + extra, 64, 64]), PointnetFPModule(mlp=[128 + 64, 128, 64]),
                                 PointnetFPModule(mlp=[256 + 128, 128, 128])])

    def forward(self, cloud: torch.Tensor, geometry: Dict[str, torch.Tensor] = None) -> torch.Tensor:
        xyz, feats = cloud[..., :3].contiguous(), cloud[..., 3:].transpose(1, 2).contiguous()
        l_xyz, l_feat = [xyz], [feats]
        for level, sa in enumerate(self.sa):
            if geometry is None:
                x, f = sa(l_xyz[-1], l_feat[-1])
            else:
                x, f = self._sa_given(sa, level, l_xyz[-1], l_feat[-1], geometry)
            l_xyz.append(x)
            l_feat.append(f)
        for i in range(len(self.fp) - 1, -1, -1):
            if geometry is None:
                l_feat[i] = self.fp[i](l_xyz[i], l_xyz[i + 1], l_feat[i], l_feat[i + 1])
            else:
                l_feat[i] = self._fp_given(self.fp[i], i, l_feat[i], l_feat[i + 1], geometry)
        return l_feat[0]

    @staticmethod
    def _sa_given(sa, level: int, xyz, feats, geometry):
        new_xyz = _gather_rows(xyz, geometry[f"fps{level}"])
        outs = []
        for scale, mlp in enumerate(sa.mlps):
            idx = geometry[f"ball{level}_{scale}"]  # [B, M, S]
            b, m, k = idx.shape
            flat = idx.reshape(b, m * k)
            g_xyz = (_gather_rows(xyz, flat).reshape(b, m, k, 3) - new_xyz[:, :, None]).permute(0, 3, 1, 2)
            if sa.groupers[scale].normalize_xyz:
                g_xyz = g_xyz / sa.groupers[scale].radius
            g_feat = torch.gather(feats, 2, flat[:, None].expand(-1, feats.shape[1], -1)).reshape(b, -1, m, k)
            outs.append(torch.amax(mlp(torch.cat([g_xyz, g_feat], 1)), dim=3))
        return new_xyz, torch.cat(outs, 1)

    @staticmethod
    def _fp_given(fp, level: int, skip, known_feats, geometry):
        dist, idx = geometry[f"nn{level}_dist"], geometry[f"nn{level}_idx"]  # [B, n, 3]
        recip = 1.0 / (dist + 1e-8)
        weight = recip / recip.sum(2, keepdim=True)
        b, n, _ = idx.shape
        c = known_feats.shape[1]
        near = torch.gather(known_feats, 2, idx.reshape(b, 1, n * 3).expand(-1, c, -1)).reshape(b, c, n, 3)
        interp = (near * weight[:, None]).sum(3)
        return fp.mlp(torch.cat([interp, skip], 1).unsqueeze(-1))[..., 0]


def _gather_rows(xyz: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    return torch.gather(xyz, 1, idx.long()[..., None].expand(-1, -1, xyz.shape[2]))


class Geometry(nn.Module):
    """The PointBranch's sampling and neighbour indices from xyz [B, N, 3] (pointrt operators),
    exported once and run by the runtime on each training frame."""

    def forward(self, xyz: torch.Tensor):
        outs, levels = [], [xyz]
        for level, (npoint, radii, nsamples) in enumerate(SA_SPECS):
            cur = levels[-1]
            fps = ops.furthest_point_sample(cur, npoint)
            new = _gather_rows(cur, fps)
            outs.append(fps)
            outs += [ops.ball_query(cur, new, r, k) for r, k in zip(radii, nsamples)]
            levels.append(new)
        for level in range(len(SA_SPECS)):
            dist, idx = ops.three_nn(levels[level], levels[level + 1])
            outs += [dist, idx]
        return tuple(outs)


GEOMETRY_NAMES = [n for level in range(3) for n in (f"fps{level}", f"ball{level}_0", f"ball{level}_1")] + \
    [n for level in range(3) for n in (f"nn{level}_dist", f"nn{level}_idx")]


def _head(widths: List[int]) -> nn.Sequential:
    layers: List[nn.Module] = []
    for a, b in zip(widths[:-2], widths[1:-1]):
        layers += [nn.Conv1d(a, b, 1, bias=False), nn.BatchNorm1d(b), nn.ReLU(inplace=True)]
    layers.append(nn.Conv1d(widths[-2], widths[-1], 1))
    return nn.Sequential(*layers)


class ReducedPVN3D(nn.Module):
    """forward(rgb [B,3,H,W], cloud [B,N,9], choose [B,1,N]) -> (kp_offsets [B,K,N,3],
    seg_logits [B,C,N], ctr_offsets [B,1,N,3]); with_pose=True appends PVN3D's pose step."""

    def __init__(self, num_classes: int = len(ps.CLASSES), num_kps: int = ps.NUM_KEYPOINTS, with_pose: bool = False,
                 bandwidth: float = 0.04, normalize_xyz: bool = True):
        super().__init__()
        self.num_kps = num_kps
        self.cnn = ImageBranch()
        self.pointnet2 = PointBranch(normalize_xyz=normalize_xyz)
        self.conv2_rgb, self.conv2_cld = nn.Conv1d(32, 64, 1), nn.Conv1d(64, 64, 1)
        self.conv3, self.conv4 = nn.Conv1d(96, 128, 1), nn.Conv1d(128, 128, 1)
        fused = 96 + 128 + 128  # [rgb, cloud], their projections, the global average
        self.seg = _head([fused, 96, 64, num_classes])
        self.kp = _head([fused, 96, 64, num_kps * 3])
        self.ctr = _head([fused, 96, 64, 3])
        self.with_pose = with_pose
        self.bandwidth = bandwidth  # MeanShift's (PVN3D uses 0.08 m for YCB; these objects are smaller)
        self.register_buffer("model_kps", torch.from_numpy(ps.model_keypoints()))

    def forward(self, rgb: torch.Tensor, cloud: torch.Tensor, choose: torch.Tensor,
                geometry: Dict[str, torch.Tensor] = None):
        emb = self.cnn(rgb)
        b, d = emb.shape[0], emb.shape[1]
        rgb_emb = torch.gather(emb.reshape(b, d, -1), 2, choose.repeat(1, d, 1))
        cld_emb = self.pointnet2(cloud, geometry)
        n = cld_emb.shape[2]
        feat_1 = torch.cat([rgb_emb, cld_emb], 1)
        feat_2 = torch.cat([F.relu(self.conv2_rgb(rgb_emb)), F.relu(self.conv2_cld(cld_emb))], 1)
        rgbd = F.relu(self.conv4(F.relu(self.conv3(feat_1))))
        fused = torch.cat([feat_1, feat_2, rgbd.mean(2, keepdim=True).expand(-1, -1, n)], 1)
        seg = self.seg(fused)
        kp = self.kp(fused).reshape(b, self.num_kps, 3, n).permute(0, 1, 3, 2)
        ctr = self.ctr(fused).reshape(b, 1, 3, n).permute(0, 1, 3, 2)
        if not self.with_pose:
            return kp, seg, ctr
        poses, status, labels = pose_ops.pose_from_votes(cloud[..., :3], kp, ctr, seg, self.model_kps, self.bandwidth)
        return poses, status, labels


# ----------------------------------------------------------------------------- data and training

class GeometryRunner:
    """Runs the exported Geometry model in the pointrt runtime (one file per batch shape)."""

    def __init__(self, workdir: str, batch: int, points: int):
        import pointrt
        from pointrt import _pointrt
        path = os.path.join(workdir, f"geometry_{batch}x{points}.onnx")
        pointrt.export(Geometry(), (torch.rand(batch, points, 3),), path, input_names=["xyz"],
                       output_names=GEOMETRY_NAMES, dynamic_points=False, verify=False, quiet=True)
        self.session = _pointrt.Session(path)

    def __call__(self, xyz: torch.Tensor) -> Dict[str, torch.Tensor]:
        out = self.session.run({"xyz": xyz.contiguous().numpy()})
        return {k: torch.from_numpy(v).long() if v.dtype != np.float32 else torch.from_numpy(v) for k, v in out.items()}


def make_batch(seeds: List[int], num_points: int, geometry: "GeometryRunner" = None, symmetric: bool = False,
               scene: Tuple[str, str] = ("free", "waves"), frames: List[Dict[str, np.ndarray]] = None
               ) -> Dict[str, torch.Tensor]:
    """The network's inputs and targets for the frames of these seeds; scene = (layout, colours)
    of pose_synth.render_frame, or the seeds' frames already rendered (`frames`)."""
    frames = frames or [ps.render_frame(s, layout=scene[0], colours=scene[1]) for s in seeds]
    items = [ps.network_inputs(frame, num_points, s, symmetric) for frame, s in zip(frames, seeds)]
    batch = {k: torch.from_numpy(np.stack([it[k] for it in items])) for k in items[0]}
    if geometry is not None:
        batch["geometry"] = geometry(batch["cloud"][..., :3])
    return batch


def losses(model: nn.Module, batch: Dict[str, torch.Tensor]) -> Tuple[torch.Tensor, Dict[str, float]]:
    kp, seg, ctr = model(batch["rgb"], batch["cloud"], batch["choose"], batch.get("geometry"))
    weight = torch.tensor([0.25] + [1.0] * (seg.shape[1] - 1))
    seg_loss = F.cross_entropy(seg, batch["labels"], weight=weight)
    fg = (batch["labels"] > 0).float()
    denom = fg.sum().clamp(min=1)
    kp_loss = ((kp - batch["kp_offsets"]).abs().sum(-1) * fg[:, None]).sum() / (denom * kp.shape[1])
    ctr_loss = ((ctr - batch["ctr_offsets"]).abs().sum(-1) * fg[:, None]).sum() / denom
    total = seg_loss + 20.0 * (kp_loss + ctr_loss)
    return total, dict(seg=float(seg_loss), kp=float(kp_loss), ctr=float(ctr_loss))


def train(minutes: float, cpu_budget: bool, threads: int, frames: int, batch_size: int, seed: int, workdir: str,
          symmetric: bool = False, scene: Tuple[str, str] = ("free", "waves"), normalize_xyz: bool = True
          ) -> Tuple[nn.Module, dict]:
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    model = ReducedPVN3D(normalize_xyz=normalize_xyz)
    t_data = time.time()
    kind = "" if scene == ("free", "waves") else f"{scene[0]}_{scene[1]}_"
    cache = demo_cache_path(f"pose_{kind}{'sym_' if symmetric else ''}{frames}x{batch_size}x{NUM_POINTS}.pt")
    if os.path.exists(cache):
        pool = torch.load(cache)
    else:
        runner = GeometryRunner(workdir, batch_size, NUM_POINTS)
        pool = [make_batch(list(range(i, i + batch_size)), NUM_POINTS, runner, symmetric, scene)
                for i in range(0, frames, batch_size)]
        torch.save(pool, cache)
    data_s = time.time() - t_data
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    budget, start, cpu0 = minutes * 60, time.time(), time.process_time()
    elapsed = training_clock(cpu_budget, threads)
    loads, curve, step = [], [], 0
    model.train()
    while elapsed() < budget:
        frac = elapsed() / budget
        for g in opt.param_groups:
            g["lr"] = 2e-3 * 0.5 * (1 + np.cos(np.pi * min(frac, 1.0))) + 1e-5
        batch = pool[step % len(pool)]
        loss, parts = losses(model, batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % 25 == 0:
            loads.append(os.getloadavg()[0])
            curve.append(dict(step=step, seconds=round(time.time() - start, 1), **{k: round(v, 5) for k, v in parts.items()}))
            print(f"step {step} {time.time() - start:7.1f}s loss {float(loss):.4f} {parts}", flush=True)
    facts = dict(targets="symmetric" if symmetric else "raw", layout=scene[0], colours=scene[1],
                 xyz_units="radius" if normalize_xyz else "metres", frames=frames, batch_size=batch_size, points=NUM_POINTS,
                 image=list(ps.IMAGE_SIZE), steps=step,
                 epochs=round(step * batch_size / frames, 2), train_seconds=round(time.time() - start, 1),
                 train_cpu_seconds=round(time.process_time() - cpu0, 1), budget="cpu" if cpu_budget else "wall",
                 data_seconds=round(data_s, 1), threads=threads, load_average_mean=round(float(np.mean(loads)), 2)
                 if loads else None, load_average_max=round(float(np.max(loads)), 2) if loads else None,
                 parameters=sum(p.numel() for p in model.parameters()), curve=curve)
    return model.eval(), facts


def held_out_add_s(model: "ReducedPVN3D", frames: int, scene: Tuple[str, str], workdir: str,
                   bandwidth: float = 0.04) -> Dict[str, float]:
    """The fraction of objects with ADD-S under 10% of the diameter on the first `frames` held-out
    frames, per class and overall, with PyTorch's pose step (the exported file computes the same)."""
    from pointrt import metrics
    runner = GeometryRunner(workdir, 1, NUM_POINTS)
    desc = scene_description(scene=scene)
    passed: Dict[int, List[bool]] = {c: [] for c in range(1, len(ps.CLASSES))}
    model.eval()
    for seed in range(ps.HELD_OUT_SEED0, ps.HELD_OUT_SEED0 + frames):
        frame = ps.render_frame(seed, layout=scene[0], colours=scene[1])
        b = make_batch([seed], NUM_POINTS, runner, frames=[frame])
        with torch.no_grad():
            kp, seg, ctr = model(b["rgb"], b["cloud"], b["choose"], b["geometry"])
            poses, status, _ = pose_ops.pose_from_votes(b["cloud"][..., :3], kp, ctr, seg, model.model_kps, bandwidth)
        for c, gt in zip(frame["classes"], frame["poses"]):
            d = metrics.add_s(poses[0, c].numpy(), gt, desc["model_points"][c]) if status[0, c] == 0 else np.inf
            passed[int(c)].append(bool(d < 0.1 * desc["diameters"][c]))
    out = {ps.CLASSES[c]: round(float(np.mean(v)), 4) for c, v in passed.items()}
    out["all"] = round(float(np.mean(sum(passed.values(), []))), 4)
    return out


def scene_description(points_per_model: int = 1000, scene: Tuple[str, str] = ("free", "waves")
                      ) -> Dict[str, np.ndarray]:
    """What `pointrt run --eval / --render` need about the scene: camera, models, diameters; and
    the frames the network was trained on (layout, colours: what the demo renders)."""
    classes = len(ps.CLASSES)
    pts = np.zeros((classes, points_per_model, 3), np.float32)
    for i in range(len(ps.OBJECTS)):
        p = ps.object_points(i)["points"]
        pts[i + 1] = p[np.linspace(0, len(p) - 1, points_per_model).astype(int)]
    diam = np.array([0.0] + [ps.diameter(i) for i in range(len(ps.OBJECTS))], np.float32)
    return dict(camera=np.array(ps.CAMERA, np.float32), model_points=pts, diameters=diam,
                keypoints=ps.model_keypoints(), symmetric=np.zeros(classes, bool),
                class_names=np.array(ps.CLASSES), layout=np.array(scene[0]), colours=np.array(scene[1]))


def export(model: ReducedPVN3D, path: str, bandwidth: float) -> None:
    import pointrt
    full = ReducedPVN3D(with_pose=True, bandwidth=bandwidth, normalize_xyz=model.pointnet2.normalize_xyz)
    full.load_state_dict(model.state_dict())
    full.eval()
    b = make_batch([10 ** 6], NUM_POINTS)
    pointrt.export(full, (b["rgb"], b["cloud"], b["choose"]), path, input_names=INPUT_NAMES,
                   output_names=OUTPUT_NAMES, dynamic_points=False, fix_adaptive_pool=True, verify=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=30.0, help="training time budget (see --budget)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--budget", choices=["cpu", "wall"], default="cpu",
                    help="cpu: --minutes of CPU time per thread (what an idle machine does in that wall time)")
    ap.add_argument("--frames", type=int, default=1600, help="training frames (seeds 0 .. frames-1)")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--targets", choices=["symmetric", "raw"], default="symmetric",
                    help="keypoint targets of the symmetric shapes: their canonical equivalent pose "
                         "(pose_synth.canonical_rotation, the committed demo) or the rendered pose (docs/pipelines.md)")
    ap.add_argument("--layout", choices=ps.LAYOUTS, default="tabletop",
                    help="free: any rotation in front of a distant plane; tabletop: resting on a table")
    ap.add_argument("--colours", choices=ps.COLOUR_CODES, default="waves", help="the objects' surface colour code")
    ap.add_argument("--bandwidth", type=float, default=0.04, help="MeanShift bandwidth (m) of the exported pose step")
    ap.add_argument("--xyz-units", choices=["radius", "metres"], default="radius",
                    help="PointNet++ neighbours' relative xyz in units of the ball's radius (VoteNet) or in metres")
    ap.add_argument("--eval-frames", type=int, default=50,
                    help="held-out frames scored after training (ADD-S < 10%% of the diameter, in training.json)")
    ap.add_argument("--export-only", action="store_true", help="export the saved pose_demo.pt again and stop")
    ap.add_argument("--prepare-only", action="store_true", help="generate (and cache) the training data, then stop")
    ap.add_argument("--out", default=os.path.join(ROOT, "models", "demo_pose"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.export_only:
        model = ReducedPVN3D()
        model.load_state_dict(torch.load(os.path.join(a.out, "pose_demo.pt")))
        return export(model.eval(), os.path.join(a.out, "pose_demo.onnx"), a.bandwidth)
    wall = time.time()
    import tempfile
    with tempfile.TemporaryDirectory() as work:
        if a.prepare_only:
            return train(0, False, a.threads, a.frames, a.batch, a.seed, work, a.targets == "symmetric",
                         (a.layout, a.colours)) and None
        model, facts = train(a.minutes, a.budget == "cpu", a.threads, a.frames, a.batch, a.seed, work,
                             a.targets == "symmetric", (a.layout, a.colours), a.xyz_units == "radius")
        if a.eval_frames:
            facts["held_out_under_10_percent"] = held_out_add_s(model, a.eval_frames, (a.layout, a.colours), work,
                                                                a.bandwidth)
            print("held-out ADD-S < 10% of the diameter:", facts["held_out_under_10_percent"], flush=True)
    torch.save(model.state_dict(), os.path.join(a.out, "pose_demo.pt"))
    np.savez(os.path.join(a.out, "scene.npz"), **scene_description(scene=(a.layout, a.colours)))
    export(model, os.path.join(a.out, "pose_demo.onnx"), a.bandwidth)
    facts["bandwidth"] = a.bandwidth
    write_training_record(a.out, facts, wall, sys.argv)


if __name__ == "__main__":
    main()
