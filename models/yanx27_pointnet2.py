"""PointNet++ in the layout of yanx27/Pointnet_Pointnet2_pytorch (``models/pointnet2_utils.py`` and
the ``pointnet2_cls_ssg`` / ``pointnet2_cls_msg`` / ``pointnet2_sem_seg`` / ``pointnet2_part_seg_ssg``
models), written in pure PyTorch with the same operations in the same order, so that a plain
``torch.onnx.export`` writes the graph that code's users get: every sampling step unrolled into
standard operators (tens of thousands of Shape/Gather/Reshape/Expand/Where/ScatterND nodes), no
custom operators.

One deliberate difference: farthest point sampling starts at point 0 instead of a random point
(``torch.randint``), so the export is deterministic and every runtime can be compared on it.
Module and parameter names follow the original (``sa1.mlp_convs.0.weight``, ``fp3.mlp_bns.1``,
``fc1``, ``bn1`` ...), so its checkpoints load with ``load_state_dict``.

Shapes: the models take points channel-first, [B, 3 + extra channels, N], like the original.
``npoints`` (the FPS sample counts per level) defaults to the original's; tests pass small ones,
since the export unrolls one loop iteration per sample (the 1024-point cls_ssg file has ~48k
nodes and torch 1.13 takes several CPU minutes to write it).

    python models/yanx27_pointnet2.py --model cls_ssg --points 1024 --export yanx27_cls_ssg.onnx
"""
import argparse
from typing import List, Optional, Sequence, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

Tensor = torch.Tensor


# ----------------------------------------------------------------------------- pointnet2_utils
def square_distance(src: Tensor, dst: Tensor) -> Tensor:
    """Squared Euclidean distance of every src point to every dst point, [B, N, C] x [B, M, C] ->
    [B, N, M], expanded as |s|^2 + |d|^2 - 2 s.d (one batched MatMul, two row sums)."""
    batch, n, _ = src.shape
    _, m, _ = dst.shape
    dist = -2 * torch.matmul(src, dst.permute(0, 2, 1))
    dist += torch.sum(src**2, -1).view(batch, n, 1)
    dist += torch.sum(dst**2, -1).view(batch, 1, m)
    return dist


def index_points(points: Tensor, idx: Tensor) -> Tensor:
    """Rows of ``points`` [B, N, C] picked by ``idx`` [B, S...] -> [B, S..., C], by advanced
    indexing with an explicit batch index tensor broadcast to idx's shape."""
    batch = points.shape[0]
    view_shape = [idx.shape[0]] + [1] * (idx.dim() - 1)
    repeat_shape = [1] + list(idx.shape)[1:]
    batch_idx = torch.arange(batch, dtype=torch.long, device=points.device).view(view_shape).repeat(repeat_shape)
    return points[batch_idx, idx, :]


def farthest_point_sample(xyz: Tensor, npoint: int) -> Tensor:
    """Indices [B, npoint] of farthest point sampling on xyz [B, N, 3], started at point 0 (the
    original starts at a random point). Runs as a Python loop, so the export unrolls it."""
    batch, n, _ = xyz.shape
    centroids = torch.zeros(batch, npoint, dtype=torch.long, device=xyz.device)
    distance = torch.ones(batch, n, device=xyz.device) * 1e10
    farthest = torch.zeros(batch, dtype=torch.long, device=xyz.device)
    batch_idx = torch.arange(batch, dtype=torch.long, device=xyz.device)
    for i in range(npoint):
        centroids[:, i] = farthest
        centroid = xyz[batch_idx, farthest, :].view(batch, 1, 3)
        dist = torch.sum((xyz - centroid) ** 2, -1)
        closer = dist < distance
        distance[closer] = dist[closer]
        farthest = torch.max(distance, -1)[1]
    return centroids


def query_ball_point(radius: float, nsample: int, xyz: Tensor, new_xyz: Tensor) -> Tensor:
    """Ball query [B, S, nsample]: for each query point in new_xyz [B, S, 3], the first nsample
    indices (ascending) of xyz [B, N, 3] within ``radius``; missing slots repeat the first hit.
    Done as the original does it: mark points outside with N, sort each row, keep the head."""
    batch, n, _ = xyz.shape
    _, s, _ = new_xyz.shape
    group_idx = torch.arange(n, dtype=torch.long, device=xyz.device).view(1, 1, n).repeat([batch, s, 1])
    sqrdists = square_distance(new_xyz, xyz)
    group_idx[sqrdists > radius**2] = n
    group_idx = group_idx.sort(dim=-1)[0][:, :, :nsample]
    first = group_idx[:, :, 0].view(batch, s, 1).repeat([1, 1, nsample])
    empty = group_idx == n
    group_idx[empty] = first[empty]
    return group_idx


def sample_and_group(npoint: int, radius: float, nsample: int, xyz: Tensor, points: Optional[Tensor],
                     returnfps: bool = False):
    """FPS centres new_xyz [B, npoint, 3] and their grouped neighbourhoods [B, npoint, nsample,
    3 + D] (xyz relative to the centre, then the point features)."""
    batch, _, c = xyz.shape
    fps_idx = farthest_point_sample(xyz, npoint)
    new_xyz = index_points(xyz, fps_idx)
    idx = query_ball_point(radius, nsample, xyz, new_xyz)
    grouped_xyz = index_points(xyz, idx)
    grouped_xyz_norm = grouped_xyz - new_xyz.view(batch, npoint, 1, c)
    if points is not None:
        new_points = torch.cat([grouped_xyz_norm, index_points(points, idx)], dim=-1)
    else:
        new_points = grouped_xyz_norm
    if returnfps:
        return new_xyz, new_points, grouped_xyz, fps_idx
    return new_xyz, new_points


def sample_and_group_all(xyz: Tensor, points: Optional[Tensor]) -> Tuple[Tensor, Tensor]:
    """One group holding every point: centre at the origin [B, 1, 3], group [B, 1, N, 3 + D]."""
    batch, n, c = xyz.shape
    new_xyz = torch.zeros(batch, 1, c, device=xyz.device)
    grouped_xyz = xyz.view(batch, 1, n, c)
    if points is None:
        return new_xyz, grouped_xyz
    return new_xyz, torch.cat([grouped_xyz, points.view(batch, 1, n, -1)], dim=-1)


def _conv_bn_stack(conv: type, bn: type, in_channel: int, widths: Sequence[int]) -> Tuple[nn.ModuleList, nn.ModuleList]:
    convs, bns = nn.ModuleList(), nn.ModuleList()
    for width in widths:
        convs.append(conv(in_channel, width, 1))
        bns.append(bn(width))
        in_channel = width
    return convs, bns


def _shared_mlp(x: Tensor, convs: nn.ModuleList, bns: nn.ModuleList) -> Tensor:
    for conv, bn in zip(convs, bns):
        x = F.relu(bn(conv(x)))
    return x


class PointNetSetAbstraction(nn.Module):
    """Single-scale set abstraction: sample + group (or group all), Conv2d 1x1 + BN + ReLU per
    width in ``mlp``, max over each group. xyz [B, 3, N], points [B, D, N] or None ->
    new_xyz [B, 3, S], new_points [B, mlp[-1], S]."""

    def __init__(self, npoint, radius, nsample, in_channel, mlp, group_all):
        super().__init__()
        self.npoint, self.radius, self.nsample, self.group_all = npoint, radius, nsample, group_all
        self.mlp_convs, self.mlp_bns = _conv_bn_stack(nn.Conv2d, nn.BatchNorm2d, in_channel, mlp)

    def forward(self, xyz: Tensor, points: Optional[Tensor]) -> Tuple[Tensor, Tensor]:
        xyz = xyz.permute(0, 2, 1)
        if points is not None:
            points = points.permute(0, 2, 1)
        if self.group_all:
            new_xyz, new_points = sample_and_group_all(xyz, points)
        else:
            new_xyz, new_points = sample_and_group(self.npoint, self.radius, self.nsample, xyz, points)
        new_points = _shared_mlp(new_points.permute(0, 3, 2, 1), self.mlp_convs, self.mlp_bns)  # [B, C, K, S]
        new_points = torch.max(new_points, 2)[0]
        return new_xyz.permute(0, 2, 1), new_points


class PointNetSetAbstractionMsg(nn.Module):
    """Multi-scale set abstraction: one FPS, then per (radius, nsample, mlp) a ball query, grouped
    features (point features first, then relative xyz), shared MLP and max; the scales' results
    concatenated along channels."""

    def __init__(self, npoint, radius_list, nsample_list, in_channel, mlp_list):
        super().__init__()
        self.npoint, self.radius_list, self.nsample_list = npoint, radius_list, nsample_list
        self.conv_blocks, self.bn_blocks = nn.ModuleList(), nn.ModuleList()
        for widths in mlp_list:
            convs, bns = _conv_bn_stack(nn.Conv2d, nn.BatchNorm2d, in_channel + 3, widths)
            self.conv_blocks.append(convs)
            self.bn_blocks.append(bns)

    def forward(self, xyz: Tensor, points: Optional[Tensor]) -> Tuple[Tensor, Tensor]:
        xyz = xyz.permute(0, 2, 1)
        if points is not None:
            points = points.permute(0, 2, 1)
        batch, _, c = xyz.shape
        s = self.npoint
        new_xyz = index_points(xyz, farthest_point_sample(xyz, s))
        scales: List[Tensor] = []
        for i, radius in enumerate(self.radius_list):
            group_idx = query_ball_point(radius, self.nsample_list[i], xyz, new_xyz)
            grouped_xyz = index_points(xyz, group_idx)
            grouped_xyz -= new_xyz.view(batch, s, 1, c)
            grouped = grouped_xyz if points is None else torch.cat([index_points(points, group_idx), grouped_xyz], -1)
            grouped = _shared_mlp(grouped.permute(0, 3, 2, 1), self.conv_blocks[i], self.bn_blocks[i])
            scales.append(torch.max(grouped, 2)[0])
        return new_xyz.permute(0, 2, 1), torch.cat(scales, dim=1)


class PointNetFeaturePropagation(nn.Module):
    """Feature propagation: features of the S coarse points interpolated to the N fine points by
    inverse squared distance over the 3 nearest (a full sort of each distance row), concatenated
    after the fine points' own features, then Conv1d 1x1 + BN + ReLU per width.
    xyz1 [B, 3, N], xyz2 [B, 3, S], points1 [B, D1, N] or None, points2 [B, D2, S] -> [B, mlp[-1], N]."""

    def __init__(self, in_channel, mlp):
        super().__init__()
        self.mlp_convs, self.mlp_bns = _conv_bn_stack(nn.Conv1d, nn.BatchNorm1d, in_channel, mlp)

    def forward(self, xyz1: Tensor, xyz2: Tensor, points1: Optional[Tensor], points2: Tensor) -> Tensor:
        xyz1, xyz2 = xyz1.permute(0, 2, 1), xyz2.permute(0, 2, 1)
        points2 = points2.permute(0, 2, 1)
        batch, n, _ = xyz1.shape
        _, s, _ = xyz2.shape
        if s == 1:
            interpolated = points2.repeat(1, n, 1)
        else:
            dists, idx = square_distance(xyz1, xyz2).sort(dim=-1)
            dists, idx = dists[:, :, :3], idx[:, :, :3]
            recip = 1.0 / (dists + 1e-8)
            weight = recip / torch.sum(recip, dim=2, keepdim=True)
            interpolated = torch.sum(index_points(points2, idx) * weight.view(batch, n, 3, 1), dim=2)
        if points1 is not None:
            new_points = torch.cat([points1.permute(0, 2, 1), interpolated], dim=-1)
        else:
            new_points = interpolated
        return _shared_mlp(new_points.permute(0, 2, 1), self.mlp_convs, self.mlp_bns)


# ----------------------------------------------------------------------------- models
class _ClassifierHead(nn.Module):
    """fc1/bn1/drop1, fc2/bn2/drop2, fc3 and log_softmax, as in pointnet2_cls_*."""

    def __init__(self, num_class: int, drop2: float):
        super().__init__()
        self.fc1, self.bn1, self.drop1 = nn.Linear(1024, 512), nn.BatchNorm1d(512), nn.Dropout(0.4)
        self.fc2, self.bn2, self.drop2 = nn.Linear(512, 256), nn.BatchNorm1d(256), nn.Dropout(drop2)
        self.fc3 = nn.Linear(256, num_class)

    def classify(self, xyz: Tensor) -> Tuple[Tensor, Tensor]:
        batch = xyz.shape[0]
        if self.normal_channel:
            norm, xyz = xyz[:, 3:, :], xyz[:, :3, :]
        else:
            norm = None
        l1_xyz, l1_points = self.sa1(xyz, norm)
        l2_xyz, l2_points = self.sa2(l1_xyz, l1_points)
        _, l3_points = self.sa3(l2_xyz, l2_points)
        x = l3_points.view(batch, 1024)
        x = self.drop1(F.relu(self.bn1(self.fc1(x))))
        x = self.drop2(F.relu(self.bn2(self.fc2(x))))
        return F.log_softmax(self.fc3(x), -1), l3_points


class ClsSSG(_ClassifierHead):
    """pointnet2_cls_ssg.get_model: SA 512/0.2/32 -> 128/0.4/64 -> group all; input [B, 3 (+3), N];
    returns (log-probabilities [B, num_class], global feature [B, 1024, 1])."""

    def __init__(self, num_class: int = 40, normal_channel: bool = False, npoints: Sequence[int] = (512, 128)):
        super().__init__(num_class, drop2=0.4)
        self.normal_channel = normal_channel
        in_channel = 6 if normal_channel else 3
        self.sa1 = PointNetSetAbstraction(npoints[0], 0.2, 32, in_channel, [64, 64, 128], False)
        self.sa2 = PointNetSetAbstraction(npoints[1], 0.4, 64, 128 + 3, [128, 128, 256], False)
        self.sa3 = PointNetSetAbstraction(None, None, None, 256 + 3, [256, 512, 1024], True)

    def forward(self, xyz: Tensor) -> Tuple[Tensor, Tensor]:
        return self.classify(xyz)


class ClsMSG(_ClassifierHead):
    """pointnet2_cls_msg.get_model: MSG 512 x (0.1/16, 0.2/32, 0.4/128) -> 128 x (0.2/32, 0.4/64,
    0.8/128) -> group all."""

    def __init__(self, num_class: int = 40, normal_channel: bool = False, npoints: Sequence[int] = (512, 128)):
        super().__init__(num_class, drop2=0.5)
        self.normal_channel = normal_channel
        in_channel = 3 if normal_channel else 0
        self.sa1 = PointNetSetAbstractionMsg(npoints[0], [0.1, 0.2, 0.4], [16, 32, 128], in_channel,
                                             [[32, 32, 64], [64, 64, 128], [64, 96, 128]])
        self.sa2 = PointNetSetAbstractionMsg(npoints[1], [0.2, 0.4, 0.8], [32, 64, 128], 320,
                                             [[64, 64, 128], [128, 128, 256], [128, 128, 256]])
        self.sa3 = PointNetSetAbstraction(None, None, None, 640 + 3, [256, 512, 1024], True)

    def forward(self, xyz: Tensor) -> Tuple[Tensor, Tensor]:
        return self.classify(xyz)


class _SegHead(nn.Module):
    def _head(self, num_classes: int) -> None:
        self.conv1, self.bn1 = nn.Conv1d(128, 128, 1), nn.BatchNorm1d(128)
        self.drop1 = nn.Dropout(0.5)
        self.conv2 = nn.Conv1d(128, num_classes, 1)

    def _logits(self, l0_points: Tensor) -> Tensor:
        x = self.drop1(F.relu(self.bn1(self.conv1(l0_points))))
        return F.log_softmax(self.conv2(x), dim=1).permute(0, 2, 1)


class SemSeg(_SegHead):
    """pointnet2_sem_seg.get_model: input [B, 9, N] (xyz + 6 channels), SA 1024/256/64/16, four
    FP levels; returns (per-point log-probabilities [B, N, num_classes], l4 features [B, 512, 16])."""

    def __init__(self, num_classes: int = 13, npoints: Sequence[int] = (1024, 256, 64, 16)):
        super().__init__()
        self.sa1 = PointNetSetAbstraction(npoints[0], 0.1, 32, 9 + 3, [32, 32, 64], False)
        self.sa2 = PointNetSetAbstraction(npoints[1], 0.2, 32, 64 + 3, [64, 64, 128], False)
        self.sa3 = PointNetSetAbstraction(npoints[2], 0.4, 32, 128 + 3, [128, 128, 256], False)
        self.sa4 = PointNetSetAbstraction(npoints[3], 0.8, 32, 256 + 3, [256, 256, 512], False)
        self.fp4 = PointNetFeaturePropagation(768, [256, 256])
        self.fp3 = PointNetFeaturePropagation(384, [256, 256])
        self.fp2 = PointNetFeaturePropagation(320, [256, 128])
        self.fp1 = PointNetFeaturePropagation(128, [128, 128, 128])
        self._head(num_classes)

    def forward(self, xyz: Tensor) -> Tuple[Tensor, Tensor]:
        l0_points, l0_xyz = xyz, xyz[:, :3, :]
        l1_xyz, l1_points = self.sa1(l0_xyz, l0_points)
        l2_xyz, l2_points = self.sa2(l1_xyz, l1_points)
        l3_xyz, l3_points = self.sa3(l2_xyz, l2_points)
        l4_xyz, l4_points = self.sa4(l3_xyz, l3_points)
        l3_points = self.fp4(l3_xyz, l4_xyz, l3_points, l4_points)
        l2_points = self.fp3(l2_xyz, l3_xyz, l2_points, l3_points)
        l1_points = self.fp2(l1_xyz, l2_xyz, l1_points, l2_points)
        l0_points = self.fp1(l0_xyz, l1_xyz, None, l1_points)
        return self._logits(l0_points), l4_points


class PartSegSSG(_SegHead):
    """pointnet2_part_seg_ssg.get_model: input [B, 3 (+3), N] and a one-hot object class [B, 16];
    returns (per-point log-probabilities [B, N, num_classes], global feature [B, 1024, 1])."""

    def __init__(self, num_classes: int = 50, normal_channel: bool = False, npoints: Sequence[int] = (512, 128)):
        super().__init__()
        extra = 3 if normal_channel else 0
        self.normal_channel = normal_channel
        self.sa1 = PointNetSetAbstraction(npoints[0], 0.2, 32, 6 + extra, [64, 64, 128], False)
        self.sa2 = PointNetSetAbstraction(npoints[1], 0.4, 64, 128 + 3, [128, 128, 256], False)
        self.sa3 = PointNetSetAbstraction(None, None, None, 256 + 3, [256, 512, 1024], True)
        self.fp3 = PointNetFeaturePropagation(1280, [256, 256])
        self.fp2 = PointNetFeaturePropagation(384, [256, 128])
        self.fp1 = PointNetFeaturePropagation(128 + 16 + 6 + extra, [128, 128, 128])
        self._head(num_classes)

    def forward(self, xyz: Tensor, cls_label: Tensor) -> Tuple[Tensor, Tensor]:
        batch, _, n = xyz.shape
        l0_points = xyz
        l0_xyz = xyz[:, :3, :] if self.normal_channel else xyz
        l1_xyz, l1_points = self.sa1(l0_xyz, l0_points)
        l2_xyz, l2_points = self.sa2(l1_xyz, l1_points)
        l3_xyz, l3_points = self.sa3(l2_xyz, l2_points)
        l2_points = self.fp3(l2_xyz, l3_xyz, l2_points, l3_points)
        l1_points = self.fp2(l1_xyz, l2_xyz, l1_points, l2_points)
        one_hot = cls_label.view(batch, 16, 1).repeat(1, 1, n)
        l0_points = self.fp1(l0_xyz, l1_xyz, torch.cat([one_hot, l0_xyz, l0_points], 1), l1_points)
        return self._logits(l0_points), l3_points


MODELS = {"cls_ssg": ClsSSG, "cls_msg": ClsMSG, "sem_seg": SemSeg, "part_seg_ssg": PartSegSSG}
INPUT_CHANNELS = {"cls_ssg": 3, "cls_msg": 3, "sem_seg": 9, "part_seg_ssg": 3}


def randomize_batchnorm(model: nn.Module, seed: int = 0) -> nn.Module:
    """Non-trivial BatchNorm statistics (so folding them is exercised), eval mode."""
    gen = torch.Generator().manual_seed(seed)
    for mod in model.modules():
        if isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d)):
            c = mod.num_features
            mod.running_mean.copy_(torch.randn(c, generator=gen) * 0.1)
            mod.running_var.copy_(torch.rand(c, generator=gen) + 0.5)
            mod.weight.data.copy_(torch.rand(c, generator=gen) + 0.5)
            mod.bias.data.copy_(torch.randn(c, generator=gen) * 0.1)
    return model.eval()


def example_inputs(name: str, points: int, seed: int = 1) -> Tuple[Tensor, ...]:
    """Points uniform in [-1, 1]^3 (extra channels uniform too), channel-first, batch 1."""
    gen = torch.Generator().manual_seed(seed)
    cloud = torch.rand(1, INPUT_CHANNELS[name], points, generator=gen) * 2 - 1
    if name == "part_seg_ssg":
        return cloud, F.one_hot(torch.tensor([3]), 16).float()
    return (cloud,)


def export(name: str, path: str, points: int = 1024, opset: int = 14, seed: int = 0,
           **model_kwargs) -> Tuple[nn.Module, Tuple[Tensor, ...]]:
    """Export model ``name`` (random weights from ``seed``, randomised BatchNorm; ``model_kwargs``
    go to its constructor) with plain torch.onnx.export at ``points`` points; returns the model
    and the example inputs it traced with."""
    torch.manual_seed(seed)
    model = randomize_batchnorm(MODELS[name](**model_kwargs))
    inputs = example_inputs(name, points)
    names = ["points", "cls_label"][: len(inputs)]
    with torch.no_grad():
        torch.onnx.export(model, inputs, path, opset_version=opset, input_names=names,
                          output_names=["log_probs", "features"])
    return model, inputs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(MODELS), default="cls_ssg")
    ap.add_argument("--points", type=int, default=1024)
    ap.add_argument("--opset", type=int, default=14, help="torch 1.13's default opset")
    ap.add_argument("--npoints", type=int, nargs="+", help="FPS samples per level (default: the original's)")
    ap.add_argument("--export", default="yanx27_cls_ssg.onnx")
    a = ap.parse_args()
    kwargs = {"npoints": a.npoints} if a.npoints else {}
    export(a.model, a.export, a.points, a.opset, **kwargs)


if __name__ == "__main__":
    main()
