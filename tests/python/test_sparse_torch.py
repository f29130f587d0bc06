"""pointrt.torch.sparse: eager semantics against dense oracles, export structure, errors."""
from __future__ import annotations

import io
from typing import List

import numpy as np
import onnx
import pytest
import torch
from torch import nn

from pointrt.torch import sparse as sp

# plain torch.onnx.export calls: the TorchScript exporter on every torch (dynamo is the default from 2.9)
TORCHSCRIPT = {"dynamo": False} if int(torch.__version__.split(".")[0]) >= 2 else {}


def random_sites(shape: List[int], n: int, batch: int = 1, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    rows = []
    for b in range(batch):
        keys = torch.randperm(shape[0] * shape[1] * shape[2], generator=g)[:n]
        rows.append(torch.stack([torch.full_like(keys, b), keys // (shape[1] * shape[2]), (keys // shape[2]) % shape[1],
                                 keys % shape[2]], 1))
    return torch.cat(rows).int()


def at_sites(dense: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    i = idx.long()
    return dense[i[:, 0], :, i[:, 1], i[:, 2], i[:, 3]]


@pytest.mark.parametrize("shape,n,batch", [([7, 9, 8], 40, 1), ([5, 6, 7], 1, 1), ([9, 11, 13], 60, 2), ([3, 3, 3], 27, 1)])
@pytest.mark.parametrize("stride,padding,dilation,kernel", [(2, 1, 1, 3), (1, 0, 1, 3), (2, 0, 1, 2), (1, 2, 2, 3), (1, 0, 1, 1)])
def test_regular_matches_dense_convolution(shape, n, batch, stride, padding, dilation, kernel) -> None:
    torch.manual_seed(1)
    idx = random_sites(shape, n, batch)
    x = sp.SparseConvTensor(torch.randn(idx.shape[0], 4), idx, shape, batch)
    conv = sp.SparseConv3d(4, 5, kernel, stride=stride, padding=padding, dilation=dilation)
    y = conv(x)
    ref = torch.nn.functional.conv3d(x.dense(), conv.weight.permute(0, 4, 1, 2, 3), conv.bias, stride=stride,
                                     padding=padding, dilation=dilation)
    assert y.spatial_shape == list(ref.shape[2:])
    occupied = torch.nn.functional.conv3d((x.dense().abs().sum(1, keepdim=True) > 0).float(),
                                          torch.ones(1, 1, kernel, kernel, kernel), stride=stride, padding=padding,
                                          dilation=dilation)
    assert y.indices.shape[0] == int((occupied > 0).sum())
    keys = sp._site_keys(y.indices, y.spatial_shape)
    assert bool((keys[1:] > keys[:-1]).all()), "regular output rows are sorted by (b, i0, i1, i2)"
    torch.testing.assert_close(y.features, at_sites(ref, y.indices), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("kernel,dilation", [(3, 1), (1, 1), (5, 1), (3, 2)])
def test_submanifold_keeps_sites_and_matches_dense(kernel, dilation) -> None:
    torch.manual_seed(2)
    shape = [8, 10, 9]
    idx = random_sites(shape, 70, batch=2, seed=3)
    x = sp.SparseConvTensor(torch.randn(idx.shape[0], 3), idx, shape, 2)
    conv = sp.SubMConv3d(3, 6, kernel, dilation=dilation)
    y = conv(x)
    assert torch.equal(y.indices, x.indices)
    pad = (kernel - 1) // 2 * dilation
    ref = torch.nn.functional.conv3d(x.dense(), conv.weight.permute(0, 4, 1, 2, 3), conv.bias, padding=pad,
                                     dilation=dilation)
    torch.testing.assert_close(y.features, at_sites(ref, x.indices), atol=1e-5, rtol=1e-5)


def test_transposed_and_inverse() -> None:
    torch.manual_seed(4)
    shape = [7, 9, 8]
    idx = random_sites(shape, 30)
    x = sp.SparseConvTensor(torch.randn(30, 4), idx, shape, 1)
    tr = sp.SparseConvTranspose3d(4, 2, 3, stride=2, padding=1)
    y = tr(x)
    ref = torch.nn.functional.conv_transpose3d(x.dense(), tr.weight.permute(4, 0, 1, 2, 3), tr.bias, stride=2, padding=1)
    assert y.spatial_shape == list(ref.shape[2:])
    torch.testing.assert_close(y.features, at_sites(ref, y.indices), atol=1e-5, rtol=1e-5)

    down = sp.SparseConv3d(4, 5, 3, stride=2, padding=1, indice_key="d1")
    inv = sp.SparseInverseConv3d(5, 3, 3, indice_key="d1")
    h = down(x)
    z = inv(h)
    assert torch.equal(z.indices, x.indices) and z.spatial_shape == shape
    # Each pair (q_in, o, p_out) of the regular conv contributes W_inv[:, o, :] . h[p_out] to q_in.
    expected = torch.zeros(30, 3) + inv.bias
    w = inv.weight.reshape(3, 27, 5)
    for o, off in enumerate(sp._offsets([3, 3, 3])):
        for qi in range(30):
            q = idx[qi, 1:].long()
            num = q + 1 - torch.tensor(off)
            if bool((num % 2 == 0).all()):
                p = num // 2
                hit = ((h.indices[:, 1:].long() == p).all(1)).nonzero()
                if hit.numel():
                    expected[qi] += w[:, o, :] @ h.features[hit[0, 0]]
    torch.testing.assert_close(z.features, expected, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="indice_key 'nope'"):
        sp.SparseInverseConv3d(5, 3, 3, indice_key="nope")(h)


def test_index_errors_name_column_and_range() -> None:
    idx = torch.tensor([[0, 1, 2, 3], [0, 9, 2, 3]], dtype=torch.int32)
    x = sp.SparseConvTensor(torch.randn(2, 2), idx, [5, 5, 5], 1)
    with pytest.raises(ValueError, match=r"column 1 .* \[1, 9\], outside \[0, 5\)"):
        sp.SubMConv3d(2, 2, 3)(x)
    dup = torch.tensor([[0, 1, 2, 3], [0, 1, 2, 3]], dtype=torch.int32)
    with pytest.raises(ValueError, match="duplicate"):
        sp.SparseConv3d(2, 2, 3)(sp.SparseConvTensor(torch.randn(2, 2), dup, [5, 5, 5], 1))
    with pytest.raises(ValueError, match="batch index 1 is >= batch_size 1"):
        sp.scatter_dense(torch.randn(1, 2), torch.tensor([[1, 0, 0, 0]], dtype=torch.int32), [2, 2, 2], 1)


def test_empty_and_single_site() -> None:
    x = sp.SparseConvTensor(torch.zeros(0, 3), torch.zeros(0, 4, dtype=torch.int32), [5, 5, 5], 1)
    assert sp.SubMConv3d(3, 4, 3)(x).features.shape == (0, 4)
    assert sp.SparseConv3d(3, 4, 3, stride=2)(x).features.shape == (0, 4)
    one = sp.SparseConvTensor(torch.ones(1, 3), torch.tensor([[0, 2, 2, 2]], dtype=torch.int32), [5, 5, 5], 1)
    conv = sp.SubMConv3d(3, 4, 3, bias=False)
    y = conv(one)
    torch.testing.assert_close(y.features[0], conv.weight[:, 1, 1, 1, :].sum(1))


def naive_voxelize(points: np.ndarray, size, rng, max_points: int, max_voxels: int):
    grid = [int(round((rng[a + 3] - rng[a]) / size[a])) for a in range(3)]
    order, members = [], {}
    for i, p in enumerate(points.astype(np.float32)):
        if not all(np.float32(rng[a]) <= p[a] < np.float32(rng[a + 3]) for a in range(3)):
            continue
        cell = tuple(int(np.floor((p[a] - np.float32(rng[a])) / np.float32(size[a]))) for a in range(3))
        if not all(0 <= cell[a] < grid[a] for a in range(3)):
            continue
        if cell not in members:
            members[cell] = []
            order.append(cell)
        if len(members[cell]) < max_points:
            members[cell].append(p)
    order = order[:max_voxels]
    feats = np.array([np.mean(members[c], axis=0) for c in order], np.float32).reshape(-1, points.shape[1])
    coords = np.array([[0, c[2], c[1], c[0]] for c in order], np.int32).reshape(-1, 4)
    nums = np.array([len(members[c]) for c in order], np.int32)
    return feats, coords, nums


@pytest.mark.parametrize("max_points,max_voxels", [(5, 1000), (1, 7), (100, 100)])
def test_voxelize_matches_naive(max_points, max_voxels) -> None:
    rng = np.random.default_rng(5)
    pts = (rng.random((600, 5)) * [12, 10, 4, 1, 1] - [1, 0, 0.5, 0, 0]).astype(np.float32)
    pts[:3, :3] = [[10, 5, 1], [0, 0, 0], [9.9999999, 9.99999, 2.9999]]  # boundary points
    size, prange = [1.0, 1.0, 0.5], [0, 0, 0, 10, 10, 3]
    f, c, n = sp.voxelize(torch.from_numpy(pts), size, prange, max_points, max_voxels)
    rf, rc, rn = naive_voxelize(pts, size, prange, max_points, max_voxels)
    np.testing.assert_array_equal(c.numpy(), rc)
    np.testing.assert_array_equal(n.numpy(), rn)
    np.testing.assert_allclose(f.numpy(), rf, rtol=1e-5, atol=1e-5)


class TinyBackbone(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv_input = sp.SparseSequential(sp.SubMConv3d(4, 8, 3, bias=False, indice_key="subm1"),
                                              nn.BatchNorm1d(8), nn.ReLU())
        self.down = sp.SparseSequential(sp.SparseConv3d(8, 16, 3, stride=2, padding=1, bias=False, indice_key="spconv2"),
                                        nn.BatchNorm1d(16), nn.ReLU())
        self.up = sp.SparseInverseConv3d(16, 8, 3, indice_key="spconv2")

    def forward(self, points: torch.Tensor) -> torch.Tensor:
        feats, coords, _ = sp.voxelize(points, [1.0, 1.0, 1.0], [0, 0, 0, 8, 8, 8], 4, 1000)
        x = sp.SparseConvTensor(feats, coords, [8, 8, 8], 1)
        y = self.up(self.down(self.conv_input(x)))
        return y.replace_feature(torch.relu(y.features)).dense()


def export_bytes(model: nn.Module, points: torch.Tensor, training=torch.onnx.TrainingMode.EVAL) -> onnx.ModelProto:
    f = io.BytesIO()
    torch.onnx.export(model, (points,), f, input_names=["points"], output_names=["dense"], opset_version=13,
                      custom_opsets={"pointrt": 1}, dynamic_axes={"points": {0: "P"}}, training=training, **TORCHSCRIPT)
    return onnx.load_from_string(f.getvalue())


def test_export_folds_batchnorm_and_fuses_relu() -> None:
    torch.manual_seed(6)
    model = TinyBackbone().eval()
    for bn in [model.conv_input[1], model.down[1]]:
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2)
        bn.weight.data.uniform_(0.5, 1.5)
    points = torch.rand(300, 4) * 8
    proto = export_bytes(model, points)
    ops = [(n.domain, n.op_type) for n in proto.graph.node]
    assert ("pointrt", "Voxelize") in ops and ("pointrt", "ScatterDense") in ops
    convs = [n for n in proto.graph.node if n.op_type == "SparseConv"]
    assert len(convs) == 3
    assert not any(n.op_type == "BatchNormalization" for n in proto.graph.node)
    attrs = [{a.name: onnx.helper.get_attribute_value(a) for a in n.attribute} for n in convs]
    assert [a["activation"] for a in attrs] == [b"ReLU", b"ReLU", b"None"]
    assert [a["rulebook"] for a in attrs] == [b"subm1", b"spconv2", b"spconv2"]
    assert attrs[2]["inverse"] == 1 and attrs[1]["stride"] == [2, 2, 2]
    # Folding keeps the eager result.
    with torch.no_grad():
        eager = model(points)
        for seq in [model.conv_input, model.down]:
            conv, bn = seq[0], seq[1]
            w, b = sp._fold_batchnorm(conv, bn)
            x = sp.SparseConvTensor(torch.randn(5, conv.in_channels), random_sites([8, 8, 8], 5), [8, 8, 8], 1)
            plain = seq(x).features
            conv._fused = (w, b, "ReLU", 0.01)
            fused = conv(x).features
            conv._fused = None
            torch.testing.assert_close(plain, fused, atol=1e-5, rtol=1e-5)
    assert eager.shape == (1, 8, 8, 8, 8)


def test_export_refuses_what_it_cannot_express() -> None:
    class Bad(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.seq = sp.SparseSequential(sp.SubMConv3d(4, 4, 3), nn.LayerNorm(4))

        def forward(self, points: torch.Tensor) -> torch.Tensor:
            f, c, _ = sp.voxelize(points, [1.0, 1.0, 1.0], [0, 0, 0, 4, 4, 4], 2, 100)
            return self.seq(sp.SparseConvTensor(f, c, [4, 4, 4], 1)).dense()

    with pytest.raises(sp.SparseExportError, match="'1' \\(LayerNorm\\)"):
        export_bytes(Bad().eval(), torch.rand(50, 4) * 4)
    model = TinyBackbone().train()
    with pytest.raises(sp.SparseExportError, match="training mode"):
        export_bytes(model, torch.rand(50, 4) * 8, training=torch.onnx.TrainingMode.PRESERVE)


def test_state_dict_keys_and_spconv1_conversion() -> None:
    model = TinyBackbone()
    keys = set(model.state_dict())
    assert {"conv_input.0.weight", "conv_input.1.running_mean", "down.0.weight", "up.weight", "up.bias"} <= keys
    assert model.conv_input[0].weight.shape == (8, 3, 3, 3, 4)  # spconv 2.x: [Cout, k, k, k, Cin]
    v1 = {k: (v.permute(1, 2, 3, 4, 0).contiguous() if k.endswith("weight") and v.dim() == 5 else v)
          for k, v in model.state_dict().items()}
    other = TinyBackbone()
    sp.load_spconv1_state_dict(other, v1)
    for k, v in model.state_dict().items():
        assert torch.equal(v, other.state_dict()[k]), k
