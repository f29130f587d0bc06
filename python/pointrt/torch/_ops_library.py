"""The PointNet++ operators of :mod:`pointrt.torch.ops` as torch.library custom ops (torch >= 2.4).

The kernels are the autograd Functions' own forwards and backwards (one implementation of each
operator's contract); the fake kernels give the output shapes, which for these operators follow
from the input shapes and attributes.  Once registered, ``Function.apply`` calls the custom op,
so eager code, the TorchScript exporter and torch.export all see one ``pointrt::<Name>`` op.
"""
from __future__ import annotations

from typing import Any, Tuple

import torch

from . import _library, ops
from ._library import Attr, OpDecl

__all__ = ["DECLS"]


class _Ctx:
    """Stands in for an autograd Function's ctx when its forward/backward run as a kernel."""

    def __init__(self, saved: Tuple[torch.Tensor, ...] = ()) -> None:
        self.saved_tensors = saved

    def save_for_backward(self, *tensors: torch.Tensor) -> None:
        self.saved_tensors = tensors

    def mark_non_differentiable(self, *tensors: Any) -> None:
        pass


def _kernel(function):
    def kernel(*args):
        return function.forward(_Ctx(), *args)
    return kernel


def _empty(like: torch.Tensor, shape, dtype) -> torch.Tensor:
    return like.new_empty(shape, dtype=dtype)


# ------------------------------------------------------------------ backward passes (features only)
def _setup_gather(ctx, inputs, output) -> None:
    features, idx = inputs[0], inputs[1]
    ctx.save_for_backward(idx.long())
    ctx.N = features.shape[2]


def _setup_interpolate(ctx, inputs, output) -> None:
    features, idx, weight = inputs
    ctx.save_for_backward(idx.long(), weight)
    ctx.m = features.shape[2]


def _backward(function):
    def backward(ctx, *grads):
        shim = _Ctx(ctx.saved_tensors)
        shim.__dict__.update({k: v for k, v in vars(ctx).items() if k in ("N", "m")})
        return function.backward(shim, *grads)
    return backward


def _fps_fake(xyz, npoint, ignore_origin=0):
    return _empty(xyz, (xyz.shape[0], npoint), torch.int32)


def _three_nn_fake(unknown, known):
    shape = (unknown.shape[0], unknown.shape[1], 3)
    return _empty(unknown, shape, unknown.dtype), _empty(unknown, shape, torch.int32)


def _knn_fake(xyz, new_xyz, k):
    shape = (new_xyz.shape[0], new_xyz.shape[1], k)
    return _empty(xyz, shape, torch.int32), _empty(xyz, shape, xyz.dtype)


DECLS = [
    OpDecl("pointrt", "FurthestPointSample", ["xyz"], [Attr("npoint", "int"), Attr("ignore_origin", "int", 0)],
           ["idx"], _kernel(ops.FurthestPointSample), _fps_fake),
    OpDecl("pointrt", "GatherPoints", ["features", "idx"], [], ["out"], _kernel(ops.GatherPoints),
           lambda f, i: _empty(f, (f.shape[0], f.shape[1], i.shape[1]), f.dtype),
           _setup_gather, _backward(ops.GatherPoints)),
    OpDecl("pointrt", "BallQuery", ["xyz", "new_xyz"],
           [Attr("radius", "float"), Attr("nsample", "int"), Attr("min_radius", "float", 0.0, omit_default=True)],
           ["idx"], _kernel(ops.BallQuery),
           lambda x, c, r, s, mr=0.0: _empty(x, (c.shape[0], c.shape[1], s), torch.int32)),
    OpDecl("pointrt", "GroupPoints", ["features", "idx"], [], ["out"], _kernel(ops.GroupPoints),
           lambda f, i: _empty(f, (f.shape[0], f.shape[1], i.shape[1], i.shape[2]), f.dtype),
           _setup_gather, _backward(ops.GroupPoints)),
    OpDecl("pointrt", "ThreeNN", ["unknown", "known"], [], ["dist", "idx"], _kernel(ops.ThreeNN), _three_nn_fake),
    OpDecl("pointrt", "ThreeInterpolate", ["features", "idx", "weight"], [], ["out"], _kernel(ops.ThreeInterpolate),
           lambda f, i, w: _empty(f, (f.shape[0], f.shape[1], i.shape[1]), f.dtype),
           _setup_interpolate, _backward(ops.ThreeInterpolate)),
    OpDecl("pointrt", "KNN", ["xyz", "new_xyz"], [Attr("k", "int")], ["idx", "dist2"], _kernel(ops.KNN), _knn_fake),
]

for _decl in DECLS:
    _library.register(_decl)
    if _library.available():
        _function = getattr(ops, _decl.name)
        _function._custom_op = staticmethod(_decl.call)
