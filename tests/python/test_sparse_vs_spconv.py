"""pointrt.torch.sparse against spconv 2.x's own CPU implementation (the `spconv` wheel).

Same weights through both; outputs compared as sets of sites (spconv does not sort its rows)."""
from __future__ import annotations

import pytest
import torch

spconv_pytorch = pytest.importorskip("spconv.pytorch", reason="the spconv wheel is installed by scripts/setup.sh")

from pointrt.torch import sparse as sp  # noqa: E402


def sites(shape, n, batch, seed):
    g = torch.Generator().manual_seed(seed)
    rows = []
    for b in range(batch):
        keys = torch.randperm(shape[0] * shape[1] * shape[2], generator=g)[:n]
        rows.append(torch.stack([torch.full_like(keys, b), keys // (shape[1] * shape[2]), (keys // shape[2]) % shape[1],
                                 keys % shape[2]], 1))
    return torch.cat(rows).int()


def as_dict(indices: torch.Tensor, features: torch.Tensor):
    return {tuple(int(v) for v in row): features[i] for i, row in enumerate(indices)}


def assert_same_sites(ours, theirs) -> None:
    a, b = as_dict(ours.indices, ours.features), as_dict(theirs.indices, theirs.features)
    assert a.keys() == b.keys()
    for k in a:
        torch.testing.assert_close(a[k], b[k], atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("kind,kw", [
    ("subm", dict(kernel_size=3)),
    ("subm", dict(kernel_size=3, dilation=2)),
    ("regular", dict(kernel_size=3, stride=2, padding=1)),
    ("regular", dict(kernel_size=(3, 1, 1), stride=(2, 1, 1))),
    ("regular", dict(kernel_size=2, stride=2)),
])
def test_conv_matches_spconv(kind, kw) -> None:
    torch.manual_seed(0)
    shape, cin, cout = [11, 20, 17], 5, 7
    idx = sites(shape, 150, 2, 1)
    feats = torch.randn(idx.shape[0], cin)
    ours_cls = sp.SubMConv3d if kind == "subm" else sp.SparseConv3d
    theirs_cls = spconv_pytorch.SubMConv3d if kind == "subm" else spconv_pytorch.SparseConv3d
    ours = ours_cls(cin, cout, indice_key="k", **kw)
    theirs = theirs_cls(cin, cout, indice_key="k", **kw)
    assert tuple(theirs.weight.shape) == tuple(ours.weight.shape), "spconv 2.x weight layout [Cout, k0, k1, k2, Cin]"
    theirs.load_state_dict(ours.state_dict())
    y = ours(sp.SparseConvTensor(feats, idx, shape, 2))
    z = theirs(spconv_pytorch.SparseConvTensor(feats, idx, shape, 2))
    assert y.spatial_shape == list(z.spatial_shape)
    assert_same_sites(y, z)
    torch.testing.assert_close(y.dense(), z.dense(), atol=1e-4, rtol=1e-4)


def test_inverse_matches_spconv() -> None:
    torch.manual_seed(1)
    shape = [9, 14, 13]
    idx = sites(shape, 80, 1, 2)
    feats = torch.randn(idx.shape[0], 4)
    down, inv = sp.SparseConv3d(4, 6, 3, stride=2, padding=1, indice_key="d"), sp.SparseInverseConv3d(6, 3, 3, indice_key="d")
    tdown = spconv_pytorch.SparseConv3d(4, 6, 3, stride=2, padding=1, indice_key="d")
    tinv = spconv_pytorch.SparseInverseConv3d(6, 3, 3, indice_key="d")
    tdown.load_state_dict(down.state_dict())
    tinv.load_state_dict(inv.state_dict())
    y = inv(down(sp.SparseConvTensor(feats, idx, shape, 1)))
    z = tinv(tdown(spconv_pytorch.SparseConvTensor(feats, idx, shape, 1)))
    assert_same_sites(y, z)
