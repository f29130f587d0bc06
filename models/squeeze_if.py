"""A PointNet++-style classifier whose squeeze of a dynamic axis torch 1.13 exports as an ONNX If.

The group-all set abstraction pools its cloud with a window traced at `cloud` points; with the
point axis dynamic, the pooled axis is N - cloud + 1 for the exporter, so `squeeze(-1)` becomes
If(Equal(Gather(Shape(x), 3), 1), Squeeze, Identity). With the point axis static the same network
exports a plain Squeeze (the file without If, for comparison).

  python models/squeeze_if.py --out-dir /tmp/sq   # squeeze_if.onnx, squeeze_static.onnx, points.npy
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class GroupAllAbstraction(nn.Module):
    """Shared MLP over every point, max-pool over the cloud, squeeze(-1)."""

    def __init__(self, cloud: int, widths: tuple[int, ...]) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for c_in, c_out in zip((3,) + widths[:-1], widths):
            layers += [nn.Conv2d(c_in, c_out, 1), nn.BatchNorm2d(c_out), nn.ReLU()]
        self.mlp = nn.Sequential(*layers)
        self.cloud = cloud

    def forward(self, xyz: torch.Tensor) -> torch.Tensor:
        x = self.mlp(xyz.transpose(1, 2).unsqueeze(2))  # [B, C, 1, N]
        return F.max_pool2d(x, kernel_size=[1, self.cloud]).squeeze(-1)  # [B, C, 1]


class Classifier(nn.Module):
    def __init__(self, cloud: int = 64, widths: tuple[int, ...] = (16, 32), classes: int = 5) -> None:
        super().__init__()
        self.sa = GroupAllAbstraction(cloud, widths)
        self.head = nn.Sequential(nn.Linear(widths[-1], 16), nn.ReLU(), nn.Linear(16, classes))

    def forward(self, xyz: torch.Tensor) -> torch.Tensor:
        return self.head(self.sa(xyz).squeeze(-1))


def make(cloud: int = 64, widths: tuple[int, ...] = (16, 32), seed: int = 0) -> Classifier:
    """The classifier in eval mode with BatchNorm statistics that are not the identity."""
    torch.manual_seed(seed)
    model = Classifier(cloud, widths)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)
    return model.eval()


def export(model: Classifier, path: Path, batch: int = 2, dynamic_points: bool = True) -> None:
    """Opset 13; the batch axis is always dynamic, the point axis when `dynamic_points` (-> If)."""
    clouds = torch.rand(batch, model.sa.cloud, 3, generator=torch.Generator().manual_seed(1)) * 2 - 1
    axes = {0: "B", 1: "N"} if dynamic_points else {0: "B"}
    torch.onnx.export(model, (clouds,), str(path), input_names=["points"], output_names=["logits"],
                      dynamic_axes={"points": axes}, opset_version=13)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out-dir", type=Path, required=True)
    p.add_argument("--points", type=int, default=1024)
    p.add_argument("--batch", type=int, default=8)
    a = p.parse_args()
    a.out_dir.mkdir(parents=True, exist_ok=True)
    model = make(a.points, (64, 128, 1024))
    export(model, a.out_dir / "squeeze_if.onnx", a.batch, dynamic_points=True)
    export(model, a.out_dir / "squeeze_static.onnx", a.batch, dynamic_points=False)
    rng = np.random.default_rng(0)
    np.save(a.out_dir / "points.npy", rng.uniform(-1, 1, (a.batch, a.points, 3)).astype(np.float32))


if __name__ == "__main__":
    main()
