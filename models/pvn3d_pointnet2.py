"""PVN3D's point-cloud branch ``Pointnet2MSG`` (lib/pvn3d.py), on pointrt.torch.pointnet2.

12288 points with 6 extra channels (rgb + normals) -> per-point 128-d features.
SA levels 2048/1024/512/128 with radii (0.0175, 0.025), (0.025, 0.05), (0.05, 0.1), (0.1, 0.2)
(metres), nsamples (16, 32), and 4 FP levels; the names of the modules and parameters are
PVN3D's, so ``model.load_state_dict`` takes the ``pointnet2.*`` entries of a PVN3D checkpoint
(strip the ``pointnet2.`` prefix; see :func:`load_from_pvn3d_checkpoint`).

    python models/pvn3d_pointnet2.py --export pvn3d_pointnet2.onnx [--checkpoint ycb.pth.tar]
"""
import argparse
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from pointrt.torch.pointnet2 import PointnetFPModule, PointnetSAModuleMSG  # noqa: E402

try:
    from .common import break_up_pc
except ImportError:  # run as a script
    from common import break_up_pc

NUM_POINTS = 12288


class Pointnet2MSG(nn.Module):
    def __init__(self, input_channels=6, use_xyz=True):
        super().__init__()
        self.SA_modules = nn.ModuleList()
        c_in = input_channels
        self.SA_modules.append(PointnetSAModuleMSG(
            npoint=2048, radii=[0.0175, 0.025], nsamples=[16, 32],
            mlps=[[c_in, 16, 16, 32], [c_in, 32, 32, 64]], use_xyz=use_xyz))
        c_out_0 = 32 + 64
        c_in = c_out_0
        self.SA_modules.append(PointnetSAModuleMSG(
            npoint=1024, radii=[0.025, 0.05], nsamples=[16, 32],
            mlps=[[c_in, 64, 64, 128], [c_in, 64, 96, 128]], use_xyz=use_xyz))
        c_out_1 = 128 + 128
        c_in = c_out_1
        self.SA_modules.append(PointnetSAModuleMSG(
            npoint=512, radii=[0.05, 0.1], nsamples=[16, 32],
            mlps=[[c_in, 128, 196, 256], [c_in, 128, 196, 256]], use_xyz=use_xyz))
        c_out_2 = 256 + 256
        c_in = c_out_2
        self.SA_modules.append(PointnetSAModuleMSG(
            npoint=128, radii=[0.1, 0.2], nsamples=[16, 32],
            mlps=[[c_in, 256, 256, 512], [c_in, 256, 384, 512]], use_xyz=use_xyz))
        c_out_3 = 512 + 512

        self.FP_modules = nn.ModuleList()
        self.FP_modules.append(PointnetFPModule(mlp=[256 + input_channels, 128, 128]))
        self.FP_modules.append(PointnetFPModule(mlp=[512 + c_out_0, 256, 256]))
        self.FP_modules.append(PointnetFPModule(mlp=[512 + c_out_1, 512, 512]))
        self.FP_modules.append(PointnetFPModule(mlp=[c_out_3 + c_out_2, 512, 512]))

    def forward(self, pointcloud):
        """pointcloud [B, N, 3 + input_channels] -> features [B, 128, N]."""
        xyz, features = break_up_pc(pointcloud)
        l_xyz, l_features = [xyz], [features]
        for i in range(len(self.SA_modules)):
            li_xyz, li_features = self.SA_modules[i](l_xyz[i], l_features[i])
            l_xyz.append(li_xyz)
            l_features.append(li_features)
        for i in range(-1, -(len(self.FP_modules) + 1), -1):
            l_features[i - 1] = self.FP_modules[i](
                l_xyz[i - 1], l_xyz[i], l_features[i - 1], l_features[i])
        return l_features[0]


def load_from_pvn3d_checkpoint(model: Pointnet2MSG, path: str) -> None:
    """Load the ``pointnet2.*`` weights of a PVN3D checkpoint (``{"model_state": ...}`` or a
    plain state_dict, with or without DataParallel's ``module.`` prefix)."""
    ck = torch.load(path, map_location="cpu")
    sd = ck.get("model_state", ck) if isinstance(ck, dict) else ck
    sub = {}
    for k, v in sd.items():
        k = k[len("module."):] if k.startswith("module.") else k
        if k.startswith("pointnet2."):
            sub[k[len("pointnet2."):]] = v
    model.load_state_dict(sub)


def example_input(num_points=NUM_POINTS, seed=0):
    """A cloud in PVN3D's units: xyz within ~0.3 m of the camera axis at 0.5-1 m depth,
    then rgb and normals."""
    g = torch.Generator().manual_seed(seed)
    xyz = torch.rand(1, num_points, 3, generator=g) * torch.tensor([0.3, 0.3, 0.5]) \
        + torch.tensor([-0.15, -0.15, 0.5])
    rgb = torch.rand(1, num_points, 3, generator=g)
    nrm = torch.nn.functional.normalize(torch.randn(1, num_points, 3, generator=g), dim=-1)
    return torch.cat([xyz, rgb, nrm], dim=-1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--export", default="pvn3d_pointnet2.onnx")
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--points", type=int, default=NUM_POINTS)
    a = ap.parse_args()
    import pointrt
    torch.manual_seed(0)
    model = Pointnet2MSG(input_channels=6).eval()
    if a.checkpoint:
        load_from_pvn3d_checkpoint(model, a.checkpoint)
    pointrt.export(model, (example_input(a.points),), a.export, input_names=["pointcloud"],
                   output_names=["features"])


if __name__ == "__main__":
    main()
