"""Pointnet2_PyTorch ``pointnet2_utils`` API on pointrt's pure-PyTorch operators.

Same names and call signatures as ``pointnet2_ops.pointnet2_utils`` and PVN3D's
``lib/pointnet2_utils/pointnet2_utils.py``:

=========================================  ===================================  ====================
function                                   pointrt node                         backward
=========================================  ===================================  ====================
``furthest_point_sample(xyz, npoint)``     FurthestPointSample ignore_origin=1  none
``gather_operation(features, idx)``        GatherPoints                         features
``ball_query(radius, nsample, xyz, new)``  BallQuery                            none
``grouping_operation(features, idx)``      GroupPoints                          features
``three_nn(unknown, known)``               ThreeNN (dist is the root)           none
``three_interpolate(features, idx, w)``    ThreeInterpolate                     features
=========================================  ===================================  ====================

``furthest_point_sample`` keeps the reference kernel's rule that points within
``x*x+y*y+z*z <= 1e-3`` of the origin are never sampled after the first (``ignore_origin=1``);
use :func:`pointrt.torch.ops.furthest_point_sample` for the rule-free variant.
Index outputs are int32 as in the reference.
"""
from typing import Optional, Tuple

import torch
import torch.nn as nn

from .. import ops as _ops
from .._tracing import UntracedFunction  # forwards run outside the ONNX tracer (see _tracing)

__all__ = [
    "FurthestPointSampling", "GatherOperation", "ThreeNN", "ThreeInterpolate",
    "GroupingOperation", "BallQuery", "furthest_point_sample", "gather_operation", "three_nn",
    "three_interpolate", "grouping_operation", "ball_query", "QueryAndGroup", "GroupAll",
]


class FurthestPointSampling(UntracedFunction):
    """``FurthestPointSampling.apply(xyz [B,N,3], npoint) -> [B, npoint] int32``."""

    @staticmethod
    def forward(ctx, xyz, npoint):
        return _ops.FurthestPointSample.forward(ctx, xyz, npoint, 1)

    @staticmethod
    def backward(ctx, grad_out=None):
        return None, None

    @staticmethod
    def symbolic(g, xyz, npoint):
        return _ops.FurthestPointSample.symbolic(g, xyz, npoint, 1)


furthest_point_sample = FurthestPointSampling.apply


class GatherOperation(UntracedFunction):
    """``GatherOperation.apply(features [B,C,N], idx [B,M]) -> [B,C,M]``."""

    @staticmethod
    def forward(ctx, features, idx):
        return _ops.GatherPoints.forward(ctx, features, idx)

    @staticmethod
    def backward(ctx, grad_out):
        return _ops.GatherPoints.backward(ctx, grad_out)

    @staticmethod
    def symbolic(g, features, idx):
        return _ops.GatherPoints.symbolic(g, features, idx)


gather_operation = GatherOperation.apply


class ThreeNN(UntracedFunction):
    """``ThreeNN.apply(unknown [B,n,3], known [B,m,3]) -> (dist [B,n,3], idx [B,n,3] int32)``;
    ``dist`` is the Euclidean distance (the reference wrapper's ``sqrt``)."""

    @staticmethod
    def forward(ctx, unknown, known):
        return _ops.ThreeNN.forward(ctx, unknown, known)

    @staticmethod
    def backward(ctx, a=None, b=None):
        return None, None

    @staticmethod
    def symbolic(g, unknown, known):
        return _ops.ThreeNN.symbolic(g, unknown, known)


three_nn = ThreeNN.apply


class ThreeInterpolate(UntracedFunction):
    """``ThreeInterpolate.apply(features [B,C,m], idx [B,n,3], weight [B,n,3]) -> [B,C,n]``."""

    @staticmethod
    def forward(ctx, features, idx, weight):
        return _ops.ThreeInterpolate.forward(ctx, features, idx, weight)

    @staticmethod
    def backward(ctx, grad_out):
        return _ops.ThreeInterpolate.backward(ctx, grad_out)

    @staticmethod
    def symbolic(g, features, idx, weight):
        return _ops.ThreeInterpolate.symbolic(g, features, idx, weight)


three_interpolate = ThreeInterpolate.apply


class GroupingOperation(UntracedFunction):
    """``GroupingOperation.apply(features [B,C,N], idx [B,M,S]) -> [B,C,M,S]``."""

    @staticmethod
    def forward(ctx, features, idx):
        return _ops.GroupPoints.forward(ctx, features, idx)

    @staticmethod
    def backward(ctx, grad_out):
        return _ops.GroupPoints.backward(ctx, grad_out)

    @staticmethod
    def symbolic(g, features, idx):
        return _ops.GroupPoints.symbolic(g, features, idx)


grouping_operation = GroupingOperation.apply


class BallQuery(UntracedFunction):
    """``BallQuery.apply(radius, nsample, xyz [B,N,3], new_xyz [B,M,3]) -> [B,M,nsample]``
    (the reference's argument order: radius and nsample first)."""

    @staticmethod
    def forward(ctx, radius, nsample, xyz, new_xyz):
        return _ops.BallQuery.forward(ctx, xyz, new_xyz, radius, nsample, 0.0)

    @staticmethod
    def backward(ctx, a=None):
        return None, None, None, None

    @staticmethod
    def symbolic(g, radius, nsample, xyz, new_xyz):
        return _ops.BallQuery.symbolic(g, xyz, new_xyz, radius, nsample, 0.0)


ball_query = BallQuery.apply


class QueryAndGroup(nn.Module):
    """Ball query of ``radius`` around each centre, then group ``nsample`` neighbours.

    ``forward(xyz [B,N,3], new_xyz [B,M,3], features [B,C,N] or None) -> [B, 3+C, M, nsample]``
    (relative xyz first when ``use_xyz``).  ``normalize_xyz`` divides the relative xyz by the
    radius and ``ret_grouped_xyz`` also returns it (VoteNet's extensions; both off by default).
    """

    def __init__(self, radius, nsample, use_xyz=True, ret_grouped_xyz=False,
                 normalize_xyz=False):
        super().__init__()
        self.radius, self.nsample, self.use_xyz = radius, nsample, use_xyz
        self.ret_grouped_xyz = ret_grouped_xyz
        self.normalize_xyz = normalize_xyz

    def forward(self, xyz, new_xyz, features=None):
        idx = ball_query(self.radius, self.nsample, xyz, new_xyz)
        xyz_trans = xyz.transpose(1, 2).contiguous()
        grouped_xyz = grouping_operation(xyz_trans, idx)  # (B, 3, npoint, nsample)
        grouped_xyz = grouped_xyz - new_xyz.transpose(1, 2).unsqueeze(-1)
        if self.normalize_xyz:
            grouped_xyz = grouped_xyz / self.radius

        if features is not None:
            grouped_features = grouping_operation(features, idx)
            if self.use_xyz:
                new_features = torch.cat([grouped_xyz, grouped_features], dim=1)
            else:
                new_features = grouped_features
        else:
            assert self.use_xyz, "Cannot have not features and not use xyz as a feature!"
            new_features = grouped_xyz

        if self.ret_grouped_xyz:
            return new_features, grouped_xyz
        return new_features

    def extra_repr(self):
        return f"radius={self.radius}, nsample={self.nsample}, use_xyz={self.use_xyz}"


class GroupAll(nn.Module):
    """Group every point into one set: ``forward(xyz, new_xyz (ignored), features)
    -> [B, 3+C, 1, N]`` (absolute xyz, as the reference)."""

    def __init__(self, use_xyz=True, ret_grouped_xyz=False):
        super().__init__()
        self.use_xyz = use_xyz
        self.ret_grouped_xyz = ret_grouped_xyz

    def forward(self, xyz, new_xyz=None, features=None):
        grouped_xyz = xyz.transpose(1, 2).unsqueeze(2)
        if features is not None:
            grouped_features = features.unsqueeze(2)
            if self.use_xyz:
                new_features = torch.cat([grouped_xyz, grouped_features], dim=1)
            else:
                new_features = grouped_features
        else:
            new_features = grouped_xyz
        if self.ret_grouped_xyz:
            return new_features, grouped_xyz
        return new_features

    def extra_repr(self):
        return f"use_xyz={self.use_xyz}"


def _route_to_pointrt_ops() -> None:
    """Each Function's apply calls the pointrt operator's Function (``pointrt.torch.ops``), with the
    reference's argument order: one entry for the export, the point-axis analysis and, on
    torch >= 2.4, the ``pointrt::`` custom op (see pointrt.torch._library)."""
    FurthestPointSampling._route = staticmethod(lambda xyz, npoint: _ops.furthest_point_sample(xyz, npoint, 1))
    GatherOperation._route = staticmethod(_ops.gather_points)
    ThreeNN._route = staticmethod(_ops.three_nn)
    ThreeInterpolate._route = staticmethod(_ops.three_interpolate)
    GroupingOperation._route = staticmethod(_ops.group_points)
    BallQuery._route = staticmethod(lambda radius, nsample, xyz, new_xyz: _ops.ball_query(xyz, new_xyz, radius, nsample))


_route_to_pointrt_ops()
