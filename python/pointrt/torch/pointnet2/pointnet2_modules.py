"""Pointnet2_PyTorch ``pointnet2_modules`` (PointnetSAModule, PointnetSAModuleMSG,
PointnetFPModule) on pointrt's exportable operators.

Constructor arguments are those of Pointnet2_PyTorch / PVN3D.  The shared MLPs use the layout of
``etw_pytorch_utils.SharedMLP`` (what PVN3D and the original Pointnet2_PyTorch checkpoints hold)::

    mlps.0.layer0.conv.weight
    mlps.0.layer0.normlayer.bn.{weight,bias,running_mean,running_var,num_batches_tracked}
    mlps.0.layer1.conv.weight ...
    (``layer{i}.conv.bias`` instead of the norm layer when ``bn=False``)

Checkpoints in the two other layouts load too (the keys are renamed on load): the first
``etw_pytorch_utils`` (``mlps.0.layer0.bn.bn.weight``) and the later ``pointnet2_ops`` package,
whose ``build_shared_mlp`` is a flat ``nn.Sequential`` (``mlps.0.0.weight``,
``mlps.0.1.running_mean``, ...). :func:`convert_state_dict` writes any of the three layouts.

Difference from the reference, on purpose: the ``mlps`` lists passed in are not modified (the
reference adds 3 to ``mlps[i][0]`` in place when ``use_xyz``).
"""
from collections import OrderedDict
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import pointnet2_utils

__all__ = ["SharedMLP", "build_shared_mlp", "convert_state_dict", "LAYOUTS", "PointnetSAModuleMSG", "PointnetSAModule",
           "PointnetFPModule"]


class _BatchNorm2d(nn.Sequential):
    """etw_pytorch_utils.BatchNorm2d: a Sequential holding ``bn`` (weight 1, bias 0)."""

    def __init__(self, in_size):
        super().__init__()
        self.add_module("bn", nn.BatchNorm2d(in_size))
        nn.init.constant_(self[0].weight, 1.0)
        nn.init.constant_(self[0].bias, 0)


class _Conv2d(nn.Sequential):
    """etw_pytorch_utils.Conv2d (1x1, no pre-activation): ``conv``, ``normlayer``,
    ``activation``; the convolution has a bias only without batch norm."""

    def __init__(self, in_size, out_size, bn=False, activation=None):
        super().__init__()
        conv = nn.Conv2d(in_size, out_size, kernel_size=(1, 1), bias=not bn)
        nn.init.kaiming_normal_(conv.weight)
        if not bn:
            nn.init.constant_(conv.bias, 0)
        self.add_module("conv", conv)
        if bn:
            self.add_module("normlayer", _BatchNorm2d(out_size))
        if activation is not None:
            self.add_module("activation", activation)


_BN_FIELDS = ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")
LAYOUTS = ("etw", "etw_old", "flat")


class SharedMLP(nn.Sequential):
    """Point-wise MLP of 1x1 Conv2d (+ BatchNorm2d) + ReLU layers, ``args = [c0, c1, ...]``;
    state_dict keys of ``etw_pytorch_utils.SharedMLP`` as PVN3D vendors it (layout "etw").
    Loads the other two layouts too (see :meth:`key_map`)."""

    def __init__(self, args, bn=False, activation=nn.ReLU(inplace=True), name=""):
        super().__init__()
        self.bn = bool(bn)
        for i in range(len(args) - 1):
            self.add_module(name + "layer{}".format(i),
                            _Conv2d(args[i], args[i + 1], bn=bn, activation=activation))

    def key_map(self, layout: str) -> Dict[str, str]:
        """{this module's key suffix: the same tensor's suffix in ``layout``}.

        "etw": ``layer0.conv.weight``, ``layer0.normlayer.bn.running_mean`` (these modules,
        PVN3D, etw_pytorch_utils >= 2019); "etw_old": ``layer0.bn.bn.running_mean`` (the first
        etw_pytorch_utils, the original Pointnet2_PyTorch); "flat": ``pointnet2_ops``'
        ``build_shared_mlp`` Sequential [Conv2d, BatchNorm2d, ReLU] * L (``0.weight``,
        ``1.running_mean``, ``3.weight``...), [Conv2d, ReLU] * L without batch norm."""
        if layout not in LAYOUTS:
            raise ValueError(f"SharedMLP.key_map: layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
        per = 3 if self.bn else 2
        mapping: Dict[str, str] = {}
        for i, (name, _) in enumerate(self.named_children()):
            conv_fields = ("weight",) if self.bn else ("weight", "bias")
            for f in conv_fields:
                mapping[f"{name}.conv.{f}"] = f"{per * i}.{f}" if layout == "flat" else f"{name}.conv.{f}"
            for f in _BN_FIELDS if self.bn else ():
                mapping[f"{name}.normlayer.bn.{f}"] = {"etw": f"{name}.normlayer.bn.{f}",
                                                       "etw_old": f"{name}.bn.bn.{f}",
                                                       "flat": f"{per * i + 1}.{f}"}[layout]
        return mapping

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # Rename keys of the other layouts to this module's (only where its own key is absent).
        for layout in ("flat", "etw_old"):
            for own, other in self.key_map(layout).items():
                if prefix + other in state_dict and prefix + own not in state_dict:
                    state_dict[prefix + own] = state_dict.pop(prefix + other)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


def convert_state_dict(state_dict: Dict[str, torch.Tensor], model: nn.Module, layout: str = "etw"
                       ) -> "OrderedDict[str, torch.Tensor]":
    """``state_dict`` of ``model`` (a module built from these classes) with every shared-MLP key
    in ``layout`` ("etw", "etw_old" or "flat", see :meth:`SharedMLP.key_map`), whatever layout
    its keys are in now; other keys unchanged, order kept. Save in the layout your original code
    loads: ``torch.save(convert_state_dict(model.state_dict(), model, "flat"), path)``."""
    renames: Dict[str, str] = {}
    for prefix, module in model.named_modules():
        if isinstance(module, SharedMLP):
            prefix = prefix + "." if prefix else ""
            target = module.key_map(layout)
            for source_layout in LAYOUTS:
                for own, other in module.key_map(source_layout).items():
                    renames[prefix + other] = prefix + target[own]
    return OrderedDict((renames.get(k, k), v) for k, v in state_dict.items())


def build_shared_mlp(mlp_spec: List[int], bn: bool = True) -> SharedMLP:
    """pointnet2_ops' helper name; returns a :class:`SharedMLP`."""
    return SharedMLP(mlp_spec, bn=bn)


class _PointnetSAModuleBase(nn.Module):
    def __init__(self):
        super().__init__()
        self.npoint = None
        self.groupers = None
        self.mlps = None

    def forward(self, xyz: torch.Tensor, features: Optional[torch.Tensor] = None
                ) -> Tuple[Optional[torch.Tensor], torch.Tensor]:
        """xyz [B, N, 3], features [B, C, N] or None ->
        (new_xyz [B, npoint, 3] or None, new_features [B, sum(mlps[k][-1]), npoint])."""
        new_features_list = []

        xyz_flipped = xyz.transpose(1, 2).contiguous()
        new_xyz = (
            pointnet2_utils.gather_operation(
                xyz_flipped, pointnet2_utils.furthest_point_sample(xyz, self.npoint)
            ).transpose(1, 2).contiguous()
            if self.npoint is not None
            else None
        )

        for i in range(len(self.groupers)):
            new_features = self.groupers[i](xyz, new_xyz, features)  # (B, C, npoint, nsample)
            new_features = self.mlps[i](new_features)  # (B, mlp[-1], npoint, nsample)
            # max over the samples; the reference's max_pool2d(kernel_size=[1, size(3)]) does the
            # same but cannot be exported once the point count is dynamic (GroupAll).
            new_features = torch.amax(new_features, dim=3)  # (B, mlp[-1], npoint)
            new_features_list.append(new_features)

        return new_xyz, torch.cat(new_features_list, dim=1)


class PointnetSAModuleMSG(_PointnetSAModuleBase):
    """Set abstraction with multi-scale grouping.

    npoint: centres sampled by furthest point sampling (None: group all points);
    radii, nsamples: one ball query per scale; mlps: one MLP spec per scale (input width first,
    +3 added when use_xyz); bn: batch norm in the MLPs.
    """

    def __init__(self, npoint, radii, nsamples, mlps, bn=True, use_xyz=True):
        super().__init__()
        assert len(radii) == len(nsamples) == len(mlps)
        self.npoint = npoint
        self.groupers = nn.ModuleList()
        self.mlps = nn.ModuleList()
        for i in range(len(radii)):
            radius = radii[i]
            nsample = nsamples[i]
            self.groupers.append(
                pointnet2_utils.QueryAndGroup(radius, nsample, use_xyz=use_xyz)
                if npoint is not None
                else pointnet2_utils.GroupAll(use_xyz)
            )
            mlp_spec = list(mlps[i])
            if use_xyz:
                mlp_spec[0] += 3
            self.mlps.append(SharedMLP(mlp_spec, bn=bn))


class PointnetSAModule(PointnetSAModuleMSG):
    """Set abstraction with a single scale: ``PointnetSAModule(mlp, npoint=None, radius=None,
    nsample=None, bn=True, use_xyz=True)``."""

    def __init__(self, mlp, npoint=None, radius=None, nsample=None, bn=True, use_xyz=True):
        super().__init__(mlps=[mlp], npoint=npoint, radii=[radius], nsamples=[nsample], bn=bn,
                         use_xyz=use_xyz)


class PointnetFPModule(nn.Module):
    """Feature propagation: interpolate ``known_feats`` at ``unknown`` from the three nearest
    known points (inverse-distance weights), concatenate ``unknow_feats``, apply the MLP."""

    def __init__(self, mlp, bn=True):
        super().__init__()
        self.mlp = SharedMLP(mlp, bn=bn)

    def forward(self, unknown, known, unknow_feats, known_feats):
        """unknown [B,n,3], known [B,m,3] or None, unknow_feats [B,C1,n] or None,
        known_feats [B,C2,m] -> [B, mlp[-1], n]."""
        if known is not None:
            dist, idx = pointnet2_utils.three_nn(unknown, known)
            dist_recip = 1.0 / (dist + 1e-8)
            norm = torch.sum(dist_recip, dim=2, keepdim=True)
            weight = dist_recip / norm
            interpolated_feats = pointnet2_utils.three_interpolate(known_feats, idx, weight)
        else:
            interpolated_feats = known_feats.expand(
                *(list(known_feats.size()[0:2]) + [unknown.size(1)]))

        if unknow_feats is not None:
            new_features = torch.cat([interpolated_feats, unknow_feats], dim=1)
        else:
            new_features = interpolated_feats

        new_features = new_features.unsqueeze(-1)
        new_features = self.mlp(new_features)
        # [..., 0] rather than the reference's squeeze(-1): the same values, but it exports to
        # one Gather instead of an If on the (dynamic) shape.
        return new_features[..., 0]
