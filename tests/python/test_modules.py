"""pointrt.torch.pointnet2 modules: names, constructor arguments and state_dict keys of
Pointnet2_PyTorch / PVN3D, loading of pointnet2_ops-style checkpoints, behaviour."""
import numpy as np
import pytest
import torch

from pointrt.torch import pointnet2
from pointrt.torch.pointnet2 import (GroupAll, PointnetFPModule, PointnetSAModule,
                                     PointnetSAModuleMSG, QueryAndGroup, pointnet2_modules,
                                     pointnet2_utils)

BN_KEYS = ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]


def etw_keys(prefix, n_layers, bn=True):
    keys = []
    for i in range(n_layers):
        keys.append(f"{prefix}layer{i}.conv.weight")
        if bn:
            keys += [f"{prefix}layer{i}.normlayer.bn.{k}" for k in BN_KEYS]
        else:
            keys.append(f"{prefix}layer{i}.conv.bias")
    return keys


def test_reference_names_exist():
    for name in ["furthest_point_sample", "gather_operation", "ball_query", "grouping_operation",
                 "three_nn", "three_interpolate", "QueryAndGroup", "GroupAll",
                 "FurthestPointSampling", "GatherOperation", "BallQuery", "GroupingOperation",
                 "ThreeNN", "ThreeInterpolate"]:
        assert hasattr(pointnet2_utils, name), name
        assert hasattr(pointnet2, name), name
    for name in ["PointnetSAModule", "PointnetSAModuleMSG", "PointnetFPModule"]:
        assert hasattr(pointnet2_modules, name), name


def test_sa_msg_state_dict_keys_and_shapes():
    m = PointnetSAModuleMSG(npoint=32, radii=[0.1, 0.2], nsamples=[8, 16],
                            mlps=[[6, 16, 32], [6, 32, 64]])
    keys = list(m.state_dict().keys())
    assert keys == etw_keys("mlps.0.", 2) + etw_keys("mlps.1.", 2)
    sd = m.state_dict()
    assert sd["mlps.0.layer0.conv.weight"].shape == (16, 9, 1, 1)  # 6 + 3 (use_xyz)
    assert sd["mlps.1.layer1.conv.weight"].shape == (64, 32, 1, 1)


def test_sa_does_not_mutate_mlps_argument():
    mlps = [[3, 8]]
    PointnetSAModuleMSG(npoint=4, radii=[0.1], nsamples=[4], mlps=mlps)
    assert mlps == [[3, 8]]


def test_sa_single_and_group_all_keys():
    m = PointnetSAModule(mlp=[0, 8, 8], npoint=4, radius=0.2, nsample=4)
    assert list(m.state_dict()) == etw_keys("mlps.0.", 2)
    g = PointnetSAModule(mlp=[8, 16])
    assert isinstance(g.groupers[0], GroupAll) and g.npoint is None
    nb = PointnetSAModule(mlp=[0, 8], npoint=4, radius=0.2, nsample=4, bn=False)
    assert list(nb.state_dict()) == etw_keys("mlps.0.", 1, bn=False)


def test_fp_keys():
    m = PointnetFPModule(mlp=[10, 16, 8])
    assert list(m.state_dict()) == etw_keys("mlp.", 2)


def test_pvn3d_pointnet2_keys():
    from models.pvn3d_pointnet2 import Pointnet2MSG
    sd = Pointnet2MSG(input_channels=6).state_dict()
    assert len(sd) == 4 * 2 * 3 * 6 + 4 * 2 * 6
    assert sd["SA_modules.0.mlps.0.layer0.conv.weight"].shape == (16, 9, 1, 1)
    assert sd["SA_modules.3.mlps.1.layer2.normlayer.bn.running_mean"].shape == (512,)
    assert sd["FP_modules.0.mlp.layer0.conv.weight"].shape == (128, 262, 1, 1)
    assert sd["FP_modules.3.mlp.layer1.conv.weight"].shape == (512, 512, 1, 1)


def test_load_pointnet2_ops_flat_checkpoint():
    """pointnet2_ops' build_shared_mlp writes mlps.0.0.weight, mlps.0.1.running_mean, ..."""
    m = PointnetSAModuleMSG(npoint=8, radii=[0.3], nsamples=[4], mlps=[[0, 8, 16]])
    flat = {}
    for i, layer in enumerate(["layer0", "layer1"]):
        flat[f"mlps.0.{3 * i}.weight"] = torch.randn_like(
            m.state_dict()[f"mlps.0.{layer}.conv.weight"])
        for k in BN_KEYS:
            t = m.state_dict()[f"mlps.0.{layer}.normlayer.bn.{k}"]
            flat[f"mlps.0.{3 * i + 1}.{k}"] = (torch.rand_like(t.float()) + 0.5).to(t.dtype)
    m.load_state_dict(flat)
    np.testing.assert_array_equal(m.state_dict()["mlps.0.layer1.conv.weight"],
                                  flat["mlps.0.3.weight"])
    np.testing.assert_array_equal(m.state_dict()["mlps.0.layer0.normlayer.bn.running_var"],
                                  flat["mlps.0.1.running_var"])


def test_state_dict_round_trip_into_fresh_model():
    from models.pointnet2_msg_seg import Pointnet2MSGSeg
    a, b = Pointnet2MSGSeg(num_classes=3), Pointnet2MSGSeg(num_classes=3)
    b.load_state_dict(a.state_dict())
    assert "FC_layer.0.normlayer.bn.weight" in a.state_dict()
    assert "FC_layer.2.conv.bias" in a.state_dict()


def test_query_and_group_matches_manual():
    torch.manual_seed(0)
    xyz = torch.rand(2, 40, 3)
    new = xyz[:, :5].clone()
    feats = torch.rand(2, 4, 40)
    out = QueryAndGroup(0.4, 6)(xyz, new, feats)
    assert out.shape == (2, 7, 5, 6)
    idx = pointnet2_utils.ball_query(0.4, 6, xyz, new).long()
    exp_xyz = torch.stack([xyz[b][idx[b]] for b in range(2)]) - new[:, :, None, :]
    torch.testing.assert_close(out[:, :3], exp_xyz.permute(0, 3, 1, 2))
    exp_f = torch.stack([feats[b][:, idx[b]] for b in range(2)])
    torch.testing.assert_close(out[:, 3:], exp_f)
    ga = GroupAll()(xyz, None, feats)
    assert ga.shape == (2, 7, 1, 40)


def test_furthest_point_sample_keeps_reference_origin_rule():
    xyz = torch.tensor([[[0.0, 0, 0], [0.01, 0, 0], [1, 0, 0], [0.02, 0, 0]]])
    np.testing.assert_array_equal(pointnet2_utils.furthest_point_sample(xyz, 4).numpy(),
                                  [[0, 2, 2, 2]])  # the only candidate repeats


def test_training_step_has_gradients():
    torch.manual_seed(0)
    sa = PointnetSAModuleMSG(npoint=8, radii=[0.3, 0.5], nsamples=[4, 8],
                             mlps=[[2, 8], [2, 8]])
    fp = PointnetFPModule(mlp=[16 + 2, 8])
    xyz = torch.rand(2, 32, 3)
    f = torch.rand(2, 2, 32, requires_grad=True)
    nx, nf = sa(xyz, f)
    out = fp(xyz, nx, f, nf)
    assert out.shape == (2, 8, 32)
    out.sum().backward()
    assert f.grad is not None and torch.isfinite(f.grad).all() and f.grad.abs().sum() > 0
    assert all(p.grad is not None for p in sa.parameters() if p.requires_grad)
