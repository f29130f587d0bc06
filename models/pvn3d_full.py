"""A PVN3D-style full network (He et al., CVPR 2020), written from the published architecture.

    RGB image [B, 3, H, W] --ResNet34-PSPNet--> per-pixel embedding [B, 128, H, W]
    cloud [B, N, 3 + 6] ----Pointnet2MSG------> per-point embedding [B, 128, N]
    choose [B, 1, N] (pixel index of each point) gathers the pixel embeddings of the points;
    DenseFusion concatenates both with a global feature (1792 channels per point), and three
    heads predict per point: keypoint offsets [B, K, N, 3], segmentation logits [B, N, classes]
    and the centre offset [B, 1, N, 3].

The module and parameter names are those of the published PVN3D model (``cnn.model.feats.*``,
``cnn.model.psp.*``, ``pointnet2.*``, ``rgbd_feat.*``, ``SEG_layer.*``, ``KpOF_layer.*``,
``CtrOf_layer.*``), so ``load_state_dict`` takes a PVN3D checkpoint's ``model_state``.  As in the
published code:

* the ResNet34 keeps stride 8 (layer3 and layer4 have stride 1 and, because the published
  ``_make_layer`` ignores its ``dilation`` argument, dilation 1): a 480x640 image gives a 60x80
  map; ``fc`` and ``classifier`` are in the state_dict but unused;
* the pyramid pools to 1, 2, 3 and 6 bins (adaptive average pooling; 60 and 80 are not
  multiples of 6, which torch.onnx cannot export as such: ``pointrt.export`` writes it with
  constant averaging matrices) and upsamples bilinearly (align_corners=False); the three
  ``PSPUpsample`` stages upsample with align_corners=True;
* ``DenseFusion`` averages with ``AvgPool1d(num_points)``, so the point count is fixed at
  construction: the exported file has a static N.

Inputs of :func:`example_inputs` are a synthetic RGB-D frame: the cloud is the back-projection of
a smooth depth map at the ``choose`` pixels (YCB-Video camera), with the pixel colours and
normals as its 6 channels.

    python models/pvn3d_full.py --export pvn3d_full.onnx [--height 480 --width 640 --points 12288]
"""
import argparse
import os
import sys
from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

try:
    from .common import Conv1dBlock
    from .pvn3d_pointnet2 import Pointnet2MSG
except ImportError:  # run as a script
    from common import Conv1dBlock
    from pvn3d_pointnet2 import Pointnet2MSG

NUM_POINTS = 12288
IMAGE_SIZE = (480, 640)
NUM_CLASSES = 22  # YCB-Video: 21 objects + background
NUM_KEYPOINTS = 8
# YCB-Video camera (fx, fy, cx, cy) of the synthetic frames
CAMERA = (1066.778, 1067.487, 312.9869, 241.3109)


# ----------------------------------------------------------------------------- image branch

def _conv3x3(c_in: int, c_out: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(c_in, c_out, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    """ResNet basic block: two 3x3 convolutions with batch norm and a residual connection."""

    def __init__(self, c_in: int, c_out: int, stride: int = 1, downsample: nn.Module = None):
        super().__init__()
        self.conv1 = _conv3x3(c_in, c_out, stride)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = _conv3x3(c_out, c_out)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.downsample = downsample

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        skip = x if self.downsample is None else self.downsample(x)
        return self.relu(y + skip)


class ResNet34(nn.Module):
    """ResNet34 at output stride 8 (the published extractor): returns (layer4, layer3) maps."""

    def __init__(self, blocks=(3, 4, 6, 3)):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self._width = 64
        self.layer1 = self._stage(64, blocks[0], stride=1)
        self.layer2 = self._stage(128, blocks[1], stride=2)
        self.layer3 = self._stage(256, blocks[2], stride=1)
        self.layer4 = self._stage(512, blocks[3], stride=1)
        self.avgpool = nn.AvgPool2d(7)  # unused, parameter-free (kept for the module list)
        self.fc = nn.Linear(512, 1000)  # unused, but part of the published state_dict
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                nn.init.normal_(m.weight, 0.0, (2.0 / fan_out) ** 0.5)

    def _stage(self, width: int, count: int, stride: int) -> nn.Sequential:
        downsample = None
        if stride != 1 or self._width != width:
            downsample = nn.Sequential(nn.Conv2d(self._width, width, kernel_size=1, stride=stride, bias=False),
                                       nn.BatchNorm2d(width))
        layers = [BasicBlock(self._width, width, stride, downsample)]
        self._width = width
        layers += [BasicBlock(width, width) for _ in range(1, count)]
        return nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        x3 = self.layer3(x)
        return self.layer4(x3), x3


class PSPModule(nn.Module):
    """Pyramid pooling: per bin size an adaptive average pool and a 1x1 convolution, upsampled
    back and concatenated with the input, then a 1x1 bottleneck and ReLU."""

    def __init__(self, features: int, out_features: int = 1024, sizes=(1, 2, 3, 6)):
        super().__init__()
        self.stages = nn.ModuleList([
            nn.Sequential(nn.AdaptiveAvgPool2d(output_size=(s, s)), nn.Conv2d(features, features, 1, bias=False))
            for s in sizes])
        self.bottleneck = nn.Conv2d(features * (len(sizes) + 1), out_features, kernel_size=1)
        self.relu = nn.ReLU()

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        size = (feats.size(2), feats.size(3))
        priors = [F.interpolate(stage(feats), size=size, mode="bilinear", align_corners=False)
                  for stage in self.stages]
        return self.relu(self.bottleneck(torch.cat(priors + [feats], 1)))


class PSPUpsample(nn.Module):
    """x2 bilinear upsampling (align_corners=True), 3x3 convolution, batch norm, PReLU."""

    def __init__(self, c_in: int, c_out: int):
        super().__init__()
        self.conv = nn.Sequential(nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True),
                                  nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.PReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


class ModifiedPSPNet(nn.Module):
    """ResNet34 + pyramid pooling + three x2 upsampling stages: a 128-d embedding per pixel (and
    per-pixel class log-probabilities, which PVN3D does not use)."""

    def __init__(self, n_classes: int = NUM_CLASSES, sizes=(1, 2, 3, 6), psp_size: int = 512,
                 deep_features_size: int = 256):
        super().__init__()
        self.feats = ResNet34()
        self.psp = PSPModule(psp_size, 1024, sizes)
        self.drop_1 = nn.Dropout2d(p=0.3)
        self.up_1 = PSPUpsample(1024, 256)
        self.up_2 = PSPUpsample(256, 64)
        self.up_3 = PSPUpsample(64, 64)
        self.drop_2 = nn.Dropout2d(p=0.15)
        self.final = nn.Sequential(nn.Conv2d(64, 128, kernel_size=1))
        self.final_seg = nn.Sequential(nn.Conv2d(64, n_classes, kernel_size=1), nn.LogSoftmax(dim=1))
        self.classifier = nn.Sequential(nn.Linear(deep_features_size, 256), nn.ReLU(), nn.Linear(256, n_classes))

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        f, _ = self.feats(x)
        p = self.drop_1(self.psp(f))
        p = self.drop_2(self.up_1(p))
        p = self.drop_2(self.up_2(p))
        p = self.up_3(p)
        return self.final(p), self.final_seg(p).permute(0, 2, 3, 1).contiguous()


class ModifiedResnet(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = ModifiedPSPNet()

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        return self.model(x)


# ----------------------------------------------------------------------------- fusion and heads

class DenseFusion(nn.Module):
    """Per-point fusion: [rgb, cloud] (256), their 256-d projections (512) and a global 1024-d
    average (1024), 1792 channels per point."""

    def __init__(self, num_points: int):
        super().__init__()
        self.conv2_rgb = nn.Conv1d(128, 256, 1)
        self.conv2_cld = nn.Conv1d(128, 256, 1)
        self.conv3 = nn.Conv1d(256, 512, 1)
        self.conv4 = nn.Conv1d(512, 1024, 1)
        self.ap1 = nn.AvgPool1d(num_points)

    def forward(self, rgb_emb: torch.Tensor, cld_emb: torch.Tensor) -> torch.Tensor:
        n_pts = cld_emb.size(2)
        feat_1 = torch.cat((rgb_emb, cld_emb), dim=1)
        feat_2 = torch.cat((F.relu(self.conv2_rgb(rgb_emb)), F.relu(self.conv2_cld(cld_emb))), dim=1)
        rgbd = F.relu(self.conv4(F.relu(self.conv3(feat_1))))
        ap_x = self.ap1(rgbd).view(-1, 1024, 1).repeat(1, 1, n_pts)
        return torch.cat([feat_1, feat_2, ap_x], 1)


def point_head(widths) -> nn.Sequential:
    """etw_pytorch_utils ``Seq(1792).conv1d(...)...``: 1x1 Conv1d + BN + ReLU blocks named 0, 1,
    ...; the last block has a bias and neither batch norm nor activation."""
    layers = [Conv1dBlock(a, b, bn=True) for a, b in zip(widths[:-2], widths[1:-1])]
    layers.append(Conv1dBlock(widths[-2], widths[-1], bn=False, activation=False))
    return nn.Sequential(*layers)


class PVN3D(nn.Module):
    """forward(pointcloud [B,N,9], rgb [B,3,H,W], choose [B,1,N] int64) ->
    (keypoint offsets [B,K,N,3], segmentation logits [B,N,classes], centre offset [B,1,N,3])."""

    def __init__(self, num_classes: int = NUM_CLASSES, pcld_input_channels: int = 6, pcld_use_xyz: bool = True,
                 num_kps: int = NUM_KEYPOINTS, num_points: int = NUM_POINTS):
        super().__init__()
        self.num_kps = num_kps
        self.num_classes = num_classes
        self.cnn = ModifiedResnet()
        self.pointnet2 = Pointnet2MSG(input_channels=pcld_input_channels, use_xyz=pcld_use_xyz)
        self.rgbd_feat = DenseFusion(num_points)
        self.SEG_layer = point_head([1792, 1024, 512, 128, num_classes])
        self.KpOF_layer = point_head([1792, 1024, 512, 256, num_kps * 3])
        self.CtrOf_layer = point_head([1792, 1024, 512, 128, 3])

    def forward(self, pointcloud: torch.Tensor, rgb: torch.Tensor, choose: torch.Tensor):
        out_rgb, _ = self.cnn(rgb)
        bs, di = out_rgb.size(0), out_rgb.size(1)
        rgb_emb = out_rgb.view(bs, di, -1)
        rgb_emb = torch.gather(rgb_emb, 2, choose.repeat(1, di, 1)).contiguous()
        n = pointcloud.size(1)
        rgbd = self.rgbd_feat(rgb_emb, self.pointnet2(pointcloud))
        seg = self.SEG_layer(rgbd).transpose(1, 2).contiguous()
        kp_of = self.KpOF_layer(rgbd).view(bs, self.num_kps, 3, n).permute(0, 1, 3, 2).contiguous()
        ctr_of = self.CtrOf_layer(rgbd).view(bs, 1, 3, n).permute(0, 1, 3, 2).contiguous()
        return kp_of, seg, ctr_of


OUTPUT_NAMES = ["pred_kp_of", "pred_rgbd_seg", "pred_ctr_of"]
INPUT_NAMES = ["pointcloud", "rgb", "choose"]


# ----------------------------------------------------------------------------- inputs and export

def example_inputs(num_points: int = NUM_POINTS, image_size: Tuple[int, int] = IMAGE_SIZE, seed: int = 0):
    """A synthetic RGB-D frame: (pointcloud [1,N,9], rgb [1,3,H,W], choose [1,1,N] int64).

    Depth is a smooth surface 0.6-1.0 m away; ``choose`` holds N distinct pixel indices in
    increasing order; the cloud is their back-projection (metres) with the pixel's colour and a
    unit normal as the 6 extra channels, as PVN3D's data loader builds it."""
    h, w = image_size
    if num_points > h * w:
        raise ValueError(f"{num_points} points do not fit a {h}x{w} image")
    g = torch.Generator().manual_seed(seed)
    rgb = torch.rand(1, 3, h, w, generator=g)
    choose = torch.randperm(h * w, generator=g)[:num_points].sort().values
    v, u = (choose // w).float(), (choose % w).float()
    depth = 0.8 + 0.2 * torch.sin(u / w * 6.0) * torch.cos(v / h * 4.0)
    fx, fy, cx, cy = CAMERA
    xyz = torch.stack([(u - cx) * depth / fx, (v - cy) * depth / fy, depth], dim=-1)
    colour = rgb.view(3, -1)[:, choose].t()
    normal = F.normalize(torch.randn(num_points, 3, generator=g), dim=-1)
    cloud = torch.cat([xyz, colour, normal], dim=-1).unsqueeze(0)
    return cloud, rgb, choose.view(1, 1, num_points)


def randomize_batchnorm(model: nn.Module, seed: int = 1) -> nn.Module:
    """Non-trivial batch-norm statistics, scaled so activations stay O(1) through the network
    (random weights with running stats 0/1 would grow layer by layer)."""
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.running_mean.copy_(torch.rand(m.num_features, generator=g) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)
    return model.eval()


def build(num_points: int = NUM_POINTS, seed: int = 0) -> PVN3D:
    torch.manual_seed(seed)
    return randomize_batchnorm(PVN3D(num_points=num_points))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--export", default="pvn3d_full.onnx")
    ap.add_argument("--checkpoint", default=None, help="a PVN3D checkpoint ({'model_state': ...} or a state_dict)")
    ap.add_argument("--points", type=int, default=NUM_POINTS)
    ap.add_argument("--height", type=int, default=IMAGE_SIZE[0])
    ap.add_argument("--width", type=int, default=IMAGE_SIZE[1])
    ap.add_argument("--no-verify", action="store_true")
    a = ap.parse_args()
    import pointrt
    model = build(a.points)
    if a.checkpoint:
        ck = torch.load(a.checkpoint, map_location="cpu")
        sd = ck.get("model_state", ck) if isinstance(ck, dict) else ck
        model.load_state_dict({k[len("module."):] if k.startswith("module.") else k: v for k, v in sd.items()})
    inputs = example_inputs(a.points, (a.height, a.width))
    # AvgPool1d(num_points) fixes the point count: the file is exported with static shapes.
    pointrt.export(model, inputs, a.export, input_names=INPUT_NAMES, output_names=OUTPUT_NAMES,
                   dynamic_points=False, verify=not a.no_verify)


if __name__ == "__main__":
    main()
