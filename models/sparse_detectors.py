"""Sparse-convolution LiDAR detectors, end to end from raw points, built on pointrt.torch.sparse.

- ``centerpoint_nuscenes()``: Voxelize (0.075 x 0.075 x 0.2 m over [-54, -54, -5, 54, 54, 3],
  grid [41, 1440, 1440]) -> SpMiddleResNetFHD (CenterPoint/det3d) -> ScatterDense -> BEV RPN ->
  CenterPoint head (heatmap, offset, height, size, rotation).
- ``second_kitti()``: Voxelize (0.05 x 0.05 x 0.1 m over [0, -40, -3, 70.4, 40, 1], grid
  [41, 1600, 1408]) -> VoxelBackBone8x (SECOND/OpenPCDet) -> the same BEV stages.

Module names and state_dict keys of the backbones follow det3d / OpenPCDet (conv_input,
conv1..conv4, extra_conv / conv_out; blocks with conv1, bn1, conv2, bn2), so their checkpoints
load after the spconv 1.x weight conversion where needed. The RPN and head are compact versions
of CenterPoint's (fewer channels), to keep CPU tests fast. With ``decode=True`` the detectors end in
CenterPointDecode + BoxNMS and output boxes (``DETECTION_NAMES``).
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

import torch
from torch import nn

from pointrt.torch import detect
from pointrt.torch import sparse as sp


def _bn(c: int) -> nn.BatchNorm1d:
    return nn.BatchNorm1d(c, eps=1e-3, momentum=0.01)


class SparseBasicBlock(sp.SparseModule):
    """det3d's SparseBasicBlock: two submanifold 3x3x3 convolutions with a residual."""

    def __init__(self, inplanes: int, planes: int, indice_key: str):
        super().__init__()
        self.conv1 = sp.SubMConv3d(inplanes, planes, 3, padding=1, bias=False, indice_key=indice_key)
        self.bn1 = _bn(planes)
        self.relu = nn.ReLU()
        self.conv2 = sp.SubMConv3d(planes, planes, 3, padding=1, bias=False, indice_key=indice_key)
        self.bn2 = _bn(planes)

    def forward(self, x: sp.SparseConvTensor) -> sp.SparseConvTensor:
        out = sp.conv_bn_act(self.conv1, self.bn1, self.relu, x)
        out = sp.conv_bn_act(self.conv2, self.bn2, None, out)
        return out.replace_feature(self.relu(out.features + x.features))


def _down(cin: int, cout: int, kernel, stride, padding, key: str) -> sp.SparseSequential:
    return sp.SparseSequential(sp.SparseConv3d(cin, cout, kernel, stride, padding=padding, bias=False, indice_key=key),
                               _bn(cout), nn.ReLU())


def _subm(cin: int, cout: int, key: str) -> sp.SparseSequential:
    return sp.SparseSequential(sp.SubMConv3d(cin, cout, 3, padding=1, bias=False, indice_key=key), _bn(cout), nn.ReLU())


class SpMiddleResNetFHD(nn.Module):
    """CenterPoint's nuScenes backbone: /8 in x, y; 41 -> 2 in z; 128 channels."""

    def __init__(self, num_input_features: int = 5):
        super().__init__()
        self.conv_input = _subm(num_input_features, 16, "res0")
        self.conv1 = sp.SparseSequential(SparseBasicBlock(16, 16, "res0"), SparseBasicBlock(16, 16, "res0"))
        self.conv2 = sp.SparseSequential(_down(16, 32, 3, 2, 1, "down1"), SparseBasicBlock(32, 32, "res1"),
                                         SparseBasicBlock(32, 32, "res1"))
        self.conv3 = sp.SparseSequential(_down(32, 64, 3, 2, 1, "down2"), SparseBasicBlock(64, 64, "res2"),
                                         SparseBasicBlock(64, 64, "res2"))
        self.conv4 = sp.SparseSequential(_down(64, 128, 3, 2, [0, 1, 1], "down3"), SparseBasicBlock(128, 128, "res3"),
                                         SparseBasicBlock(128, 128, "res3"))
        self.extra_conv = _down(128, 128, (3, 1, 1), (2, 1, 1), 0, "down4")

    def forward(self, x: sp.SparseConvTensor) -> sp.SparseConvTensor:
        x = self.conv_input(x)
        for stage in (self.conv1, self.conv2, self.conv3, self.conv4, self.extra_conv):
            x = stage(x)
        return x


class VoxelBackBone8x(nn.Module):
    """SECOND's KITTI backbone (OpenPCDet VoxelBackBone8x): /8 in x, y; 41 -> 2 in z; 128 channels."""

    def __init__(self, input_channels: int = 4):
        super().__init__()
        self.conv_input = _subm(input_channels, 16, "subm1")
        self.conv1 = sp.SparseSequential(_subm(16, 16, "subm1"))
        self.conv2 = sp.SparseSequential(_down(16, 32, 3, 2, 1, "spconv2"), _subm(32, 32, "subm2"), _subm(32, 32, "subm2"))
        self.conv3 = sp.SparseSequential(_down(32, 64, 3, 2, 1, "spconv3"), _subm(64, 64, "subm3"), _subm(64, 64, "subm3"))
        self.conv4 = sp.SparseSequential(_down(64, 64, 3, 2, (0, 1, 1), "spconv4"), _subm(64, 64, "subm4"),
                                         _subm(64, 64, "subm4"))
        self.conv_out = _down(64, 128, (3, 1, 1), (2, 1, 1), 0, "spconv_down2")

    def forward(self, x: sp.SparseConvTensor) -> sp.SparseConvTensor:
        x = self.conv_input(x)
        for stage in (self.conv1, self.conv2, self.conv3, self.conv4, self.conv_out):
            x = stage(x)
        return x


def _conv2d(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout, eps=1e-3), nn.ReLU())


class BEVBackbone(nn.Module):
    """Two-scale 2D RPN (CenterPoint's RPN, narrower): full and half resolution, upsampled and concatenated."""

    def __init__(self, in_channels: int, width: int = 64):
        super().__init__()
        self.block1 = nn.Sequential(_conv2d(in_channels, width), _conv2d(width, width))
        self.block2 = nn.Sequential(_conv2d(width, 2 * width, 2), _conv2d(2 * width, 2 * width))
        self.up1 = nn.Sequential(nn.Conv2d(width, width, 1, bias=False), nn.BatchNorm2d(width, eps=1e-3), nn.ReLU())
        self.up2 = nn.Sequential(nn.ConvTranspose2d(2 * width, width, 2, 2, bias=False), nn.BatchNorm2d(width, eps=1e-3),
                                 nn.ReLU())
        self.out_channels = 2 * width

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.block1(x)
        b = self.block2(a)
        return torch.cat([self.up1(a), self.up2(b)], dim=1)


class CenterHead(nn.Module):
    """CenterPoint head: a shared conv, then heatmap / offset / height / size / rotation branches."""

    def __init__(self, in_channels: int, num_classes: int = 3, head_channels: int = 64):
        super().__init__()
        self.shared_conv = _conv2d(in_channels, head_channels)
        outs = {"heatmap": num_classes, "offset": 2, "height": 1, "size": 3, "rotation": 2}
        self.heads = nn.ModuleDict({name: nn.Sequential(_conv2d(head_channels, head_channels),
                                                        nn.Conv2d(head_channels, c, 3, 1, 1)) for name, c in outs.items()})

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        x = self.shared_conv(x)
        return tuple(torch.sigmoid(h(x)) if name == "heatmap" else h(x) for name, h in self.heads.items())


OUTPUT_NAMES = ["heatmap", "offset", "height", "size", "rotation"]
# With decode=True: the boxes after CenterPointDecode + BoxNMS (docs/operators-detect.md).
DETECTION_NAMES = ["num_detections", "boxes", "scores", "labels"]


class SparseDetector(nn.Module):
    """points [P, F] -> Voxelize -> sparse backbone -> ScatterDense -> BEV RPN -> CenterPoint head."""

    def __init__(self, backbone: nn.Module, voxel_size: Sequence[float], point_cloud_range: Sequence[float],
                 max_points_per_voxel: int, max_voxels: int, num_classes: int = 3, rpn_width: int = 64,
                 decode: bool = False, out_size_factor: int = 8):
        super().__init__()
        self.decode = decode
        self.out_size_factor = out_size_factor  # BEV map stride in voxels (the backbone's /8)
        self.voxel_size = [float(v) for v in voxel_size]
        self.point_cloud_range = [float(v) for v in point_cloud_range]
        gx, gy, gz = sp.voxel_grid_shape(self.voxel_size, self.point_cloud_range)
        self.sparse_shape = [gz + 1, gy, gx]  # det3d/OpenPCDet pad z by one: 40 -> 41
        self.max_points_per_voxel = max_points_per_voxel
        self.max_voxels = max_voxels
        self.backbone = backbone
        self.rpn = BEVBackbone(256, rpn_width)
        self.head = CenterHead(self.rpn.out_channels, num_classes)

    def voxelize(self, points: torch.Tensor) -> sp.SparseConvTensor:
        feats, coords, _ = sp.voxelize(points, self.voxel_size, self.point_cloud_range, self.max_points_per_voxel,
                                       self.max_voxels)
        return sp.SparseConvTensor(feats, coords, self.sparse_shape, 1)

    def forward(self, points: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        x = self.backbone(self.voxelize(points))
        bev = x.dense()  # [1, 128, 2, H, W]
        n, c, d, h, w = bev.shape
        heads = self.head(self.rpn(bev.reshape(n, c * d, h, w)))
        return self.decode_heads(heads) if self.decode else heads

    def decode_heads(self, heads: Tuple[torch.Tensor, ...], score_threshold: float = 0.1,
                     iou_threshold: float = 0.2) -> Tuple[torch.Tensor, ...]:
        """Head maps -> (num_detections, boxes, scores, labels): CenterPoint's 3x3 peaks, log sizes,
        per-class rotated NMS (the heatmap is already a sigmoid)."""
        return detect.decode_and_nms(heads, voxel_size=self.voxel_size[:2], point_cloud_range=self.point_cloud_range,
                                     out_size_factor=self.out_size_factor, score_threshold=score_threshold,
                                     post_center_range=self.point_cloud_range, max_detections=500,
                                     heatmap_activation="none", peak_kernel=3, iou_threshold=iou_threshold,
                                     max_output=83, per_class=1)


def centerpoint_nuscenes(max_voxels: int = 160000, decode: bool = False) -> SparseDetector:
    return SparseDetector(SpMiddleResNetFHD(5), [0.075, 0.075, 0.2], [-54, -54, -5, 54, 54, 3], 10, max_voxels,
                          decode=decode)


def second_kitti(max_voxels: int = 40000, decode: bool = False) -> SparseDetector:
    return SparseDetector(VoxelBackBone8x(4), [0.05, 0.05, 0.1], [0, -40, -3, 70.4, 40, 1], 5, max_voxels,
                          decode=decode)


def randomize_batchnorm(model: nn.Module, seed: int = 0) -> nn.Module:
    """Give every BatchNorm non-trivial statistics, so folding is actually exercised."""
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            c = m.num_features
            m.running_mean.copy_((torch.rand(c, generator=g) - 0.5) * 0.2)
            m.running_var.copy_(torch.rand(c, generator=g) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(c, generator=g) * 0.5 + 0.75)
            m.bias.data.copy_((torch.rand(c, generator=g) - 0.5) * 0.2)
    return model
