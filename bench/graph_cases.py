"""Whole graphs for bench/compare_ops_onnxruntime.py, each written to `work_dir` once (cached):

  yanx27_cls_ssg     models/yanx27_pointnet2.py cls_ssg at 1024 points, plain torch.onnx.export
                     (opset 14): ~48k nodes of standard operators (several CPU minutes to export,
                     tens of minutes on a loaded machine: torch's _optimize_graph)
  point_transformer  a small Point-Transformer-style classifier: per point kNN (k = 16, TopK over
                     squared distances) and local multi-head attention over the neighbours with a
                     relative-position MLP, LayerNorm + MLP residuals; then global multi-head
                     self-attention (MatMul, Softmax) over every 4th point; torch.onnx.export opset 17
  centerpoint_post   CenterPoint-style detection decoding from standard operators: Sigmoid heatmap,
                     3x3 MaxPool peak test, TopK 500 over all classes and cells, Div/Mod to class
                     and cell, Gather of the regression maps, box decoding, NonMaxSuppression,
                     Gather of the kept boxes
  add_chain_10k      10,000 Add nodes in a chain on a [16] tensor: per-node overhead
"""
from __future__ import annotations

import os
import sys
from typing import Dict, List, Tuple

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from op_cases import InputSpec, f32

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def yanx27(path: str) -> List[InputSpec]:
    """The export bakes the traced cloud's data-dependent counts (how many distances shrank in
    each FPS step) into Reshape constants, so the file runs only on that cloud: it is the input."""
    cloud = path.replace(".onnx", "_points.npy")
    if not os.path.exists(path) or not os.path.exists(cloud):
        sys.path.insert(0, ROOT)
        from models import yanx27_pointnet2

        if not os.path.exists(path):
            yanx27_pointnet2.export("cls_ssg", path + ".tmp", points=1024)
            os.replace(path + ".tmp", path)
        np.save(cloud, yanx27_pointnet2.example_inputs("cls_ssg", 1024)[0].numpy())
    return [InputSpec("points", "float32", (1, 3, 1024), "npy", path=cloud)]


def point_transformer(path: str) -> List[InputSpec]:
    if not os.path.exists(path):
        import torch

        torch.manual_seed(0)
        model = _point_transformer_module()(points=1024).eval()
        xyz = torch.rand(1, 1024, 3) * 2 - 1
        with torch.no_grad():
            torch.onnx.export(model, (xyz,), path, opset_version=17, input_names=["xyz"], output_names=["logits"])
    return [f32("xyz", (1, 1024, 3), "uniform", -1.0, 1.0)]


def _point_transformer_module():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def knn(xyz, k):  # [B, N, 3] -> [B, N, k] nearest (self included)
        d = torch.sum(xyz**2, -1, keepdim=True) - 2 * xyz @ xyz.transpose(1, 2) + torch.sum(xyz**2, -1).unsqueeze(1)
        return d.topk(k, dim=-1, largest=False)[1]

    def gather(x, idx):  # x [B, N, C], idx [B, N, k] -> [B, N, k, C]
        b, n, k = idx.shape
        flat = idx.reshape(b, n * k)
        return torch.gather(x, 1, flat.unsqueeze(-1).expand(b, n * k, x.shape[-1])).reshape(b, n, k, -1)

    class LocalAttention(nn.Module):
        def __init__(self, c, heads=4, k=16):
            super().__init__()
            self.heads, self.k = heads, k
            self.qkv = nn.Linear(c, 3 * c)
            self.pos = nn.Sequential(nn.Linear(3, c), nn.ReLU(), nn.Linear(c, c))
            self.out, self.norm1, self.norm2 = nn.Linear(c, c), nn.LayerNorm(c), nn.LayerNorm(c)
            self.mlp = nn.Sequential(nn.Linear(c, 2 * c), nn.GELU(), nn.Linear(2 * c, c))

        def forward(self, xyz, x):
            b, n, c = x.shape
            h, d = self.heads, c // self.heads
            idx = knn(xyz, self.k)
            q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
            pos = self.pos(xyz.unsqueeze(2) - gather(xyz, idx))  # [B, N, k, C]
            k = (gather(k, idx) + pos).reshape(b, n, self.k, h, d)
            v = (gather(v, idx) + pos).reshape(b, n, self.k, h, d)
            score = (q.reshape(b, n, 1, h, d) * k).sum(-1) / d**0.5  # [B, N, k, h]
            att = F.softmax(score, dim=2).unsqueeze(-1)
            x = x + self.out((att * v).sum(2).reshape(b, n, c))
            return x + self.mlp(self.norm2(x))

    class GlobalAttention(nn.Module):
        def __init__(self, c, heads=4):
            super().__init__()
            self.heads = heads
            self.qkv, self.out, self.norm = nn.Linear(c, 3 * c), nn.Linear(c, c), nn.LayerNorm(c)

        def forward(self, x):
            b, n, c = x.shape
            h, d = self.heads, c // self.heads
            q, k, v = self.qkv(self.norm(x)).reshape(b, n, 3, h, d).permute(2, 0, 3, 1, 4)
            att = F.softmax(q @ k.transpose(-1, -2) / d**0.5, dim=-1)
            return x + self.out((att @ v).transpose(1, 2).reshape(b, n, c))

    class PointTransformerCls(nn.Module):
        def __init__(self, points=1024, c=64, classes=40):
            super().__init__()
            self.embed = nn.Sequential(nn.Linear(3, c), nn.ReLU(), nn.Linear(c, c))
            self.local1, self.local2 = LocalAttention(c), LocalAttention(c)
            self.global1, self.global2 = GlobalAttention(c), GlobalAttention(c)
            self.head = nn.Sequential(nn.LayerNorm(c), nn.Linear(c, classes))

        def forward(self, xyz):
            x = self.local2(xyz, self.local1(xyz, self.embed(xyz)))
            x = x[:, ::4]  # every 4th point
            x = self.global2(self.global1(x))
            return self.head(x.mean(1))

    return PointTransformerCls


def centerpoint_post(path: str, classes: int = 3, size: int = 128, k: int = 500) -> List[InputSpec]:
    """Decoding of one CenterPoint head: heatmap [1, C, H, W] logits and regression maps
    reg [1, 2], height [1, 1], dim [1, 3], rot [1, 2] (each x H x W)."""
    hw = size * size
    c = {
        "shape_flat": np.array([1, classes * hw], np.int64), "k": np.array([k], np.int64),
        "hw": np.array(hw, np.int64), "w": np.array(size, np.int64), "shape_maps": np.array([1, 8, hw], np.int64),
        "cell": np.array(0.6, np.float32), "origin": np.array(-38.4, np.float32), "half": np.array(0.5, np.float32),
        "max_out": np.array([83], np.int64), "iou": np.array([0.2], np.float32), "thr": np.array([0.1], np.float32),
        "scores_shape": np.array([1, 1, k], np.int64), "sel_col": np.array(2, np.int64),
        "split8": np.array([2, 1, 3, 2], np.int64),
    }
    n = helper.make_node
    nodes = [
        n("Sigmoid", ["heatmap"], ["hm"]),
        n("MaxPool", ["hm"], ["pooled"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("Equal", ["hm", "pooled"], ["peak"]), n("Cast", ["peak"], ["peak_f"], to=TensorProto.FLOAT),
        n("Mul", ["hm", "peak_f"], ["peaks"]), n("Reshape", ["peaks", "shape_flat"], ["flat"]),
        n("TopK", ["flat", "k"], ["scores", "idx"], axis=-1),
        n("Div", ["idx", "hw"], ["cls"]), n("Mod", ["idx", "hw"], ["cell_idx"]),
        n("Div", ["cell_idx", "w"], ["ys_i"]), n("Mod", ["cell_idx", "w"], ["xs_i"]),
        n("Cast", ["ys_i"], ["ys"], to=TensorProto.FLOAT), n("Cast", ["xs_i"], ["xs"], to=TensorProto.FLOAT),
        n("Concat", ["reg", "height", "dim", "rot"], ["maps"], axis=1),
        n("Reshape", ["maps", "shape_maps"], ["maps_flat"]),
        n("Squeeze", ["cell_idx"], ["cell_1d"]),  # [1, k] -> [k]
        n("Gather", ["maps_flat", "cell_1d"], ["picked"], axis=2),  # [1, 8, k]
        n("Split", ["picked", "split8"], ["p_reg", "p_h", "p_dim", "p_rot"], axis=1),
        n("Split", ["p_reg"], ["dx", "dy"], axis=1, num_outputs=2),
        n("Split", ["p_dim"], ["lx", "ly", "lz"], axis=1, num_outputs=3),
        n("Add", ["xs", "dx"], ["cx_cell"]), n("Add", ["ys", "dy"], ["cy_cell"]),
        n("Mul", ["cx_cell", "cell"], ["cx0"]), n("Add", ["cx0", "origin"], ["cx"]),
        n("Mul", ["cy_cell", "cell"], ["cy0"]), n("Add", ["cy0", "origin"], ["cy"]),
        n("Exp", ["lx"], ["ex"]), n("Exp", ["ly"], ["ey"]),
        n("Mul", ["ex", "half"], ["hx"]), n("Mul", ["ey", "half"], ["hy"]),
        n("Sub", ["cy", "hy"], ["y1"]), n("Sub", ["cx", "hx"], ["x1"]),
        n("Add", ["cy", "hy"], ["y2"]), n("Add", ["cx", "hx"], ["x2"]),
        n("Concat", ["y1", "x1", "y2", "x2"], ["corners"], axis=1),  # [1, 4, k]
        n("Transpose", ["corners"], ["boxes"], perm=[0, 2, 1]),  # [1, k, 4]
        n("Reshape", ["scores", "scores_shape"], ["scores3"]),
        n("NonMaxSuppression", ["boxes", "scores3", "max_out", "iou", "thr"], ["selected"]),
        n("Gather", ["selected", "sel_col"], ["keep"], axis=1),
        n("Gather", ["boxes", "keep"], ["kept_boxes"], axis=1),
        n("Gather", ["scores", "keep"], ["kept_scores"], axis=1),
        n("Gather", ["cls", "keep"], ["kept_classes"], axis=1),
    ]
    specs = [f32("heatmap", (1, classes, size, size), "normal"), f32("reg", (1, 2, size, size), "uniform"),
             f32("height", (1, 1, size, size)), f32("dim", (1, 3, size, size), "uniform", 0.0, 1.5),
             f32("rot", (1, 2, size, size))]
    _save(path, nodes, specs, c, ["kept_boxes", "kept_scores", "kept_classes"], opset=18)
    return specs


def add_chain(path: str, count: int = 10_000) -> List[InputSpec]:
    nodes = [helper.make_node("Add", ["x" if i == 0 else f"t{i - 1}", "one"], [f"t{i}" if i < count - 1 else "y"])
             for i in range(count)]
    specs = [f32("x", (16,))]
    _save(path, nodes, specs, {"one": np.full(16, 1e-3, np.float32)}, ["y"], opset=17)
    return specs


def _save(path: str, nodes, specs: List[InputSpec], consts: Dict[str, np.ndarray], outputs: List[str],
          opset: int) -> None:
    if os.path.exists(path):
        return
    to_onnx = {"float32": TensorProto.FLOAT, "int64": TensorProto.INT64, "bool": TensorProto.BOOL}
    graph = helper.make_graph(
        nodes, os.path.basename(path),
        [helper.make_tensor_value_info(s.name, to_onnx[s.dtype], list(s.shape)) for s in specs],
        [helper.make_value_info(o, onnx.TypeProto()) for o in outputs],
        [numpy_helper.from_array(v, k) for k, v in consts.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, path)


GRAPHS = {"yanx27_cls_ssg": yanx27, "point_transformer": point_transformer, "centerpoint_post": centerpoint_post,
          "add_chain_10k": add_chain}


def build_graphs(work_dir: str, names: List[str]) -> List[Tuple[str, str, List[InputSpec]]]:
    out = []
    for name in names:
        path = os.path.join(work_dir, name + ".onnx")
        out.append((name, path, GRAPHS[name](path)))
    return out
