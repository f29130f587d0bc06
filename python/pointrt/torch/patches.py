"""Fixes for PyTorch models that ``torch.onnx.export`` refuses.

Adaptive average pooling
------------------------
``torch.onnx`` exports ``adaptive_avg_pool2d`` only when every output size divides the input
size (or is 1); PSPNet-style pyramids (bins 1, 2, 3, 6 on a 60x80 map, as in PVN3D's image
branch) fail with "output size that are not factor of input size" (or "input size not
accessible" when the spatial size is dynamic).  For a *static* input size the operation is a
fixed linear map per axis: output bin ``i`` averages input rows
``floor(i*H/oh) .. ceil((i+1)*H/oh) - 1``.  :func:`adaptive_avg_pool2d_static` computes it as
``Ph @ x @ Pw^T`` with constant averaging matrices (two MatMul nodes; an AveragePool when the
sizes divide), which every ONNX runtime executes.

Use one of:

* ``with patch_adaptive_avg_pool2d(): pointrt.export(...)``: every ``F.adaptive_avg_pool2d``
  (so every ``nn.AdaptiveAvgPool2d``) traced inside the block uses the static form;
* ``replace_adaptive_avg_pool2d(model)``: swaps ``nn.AdaptiveAvgPool2d`` modules for
  :class:`StaticAdaptiveAvgPool2d` (no parameters, state_dict unchanged);
* ``pointrt.export(..., fix_adaptive_pool=True)`` (the default) retries with the patch when the
  exporter raises this error.

The input size is read while tracing and frozen into the file: export at the size you deploy.
"""
import contextlib
from typing import Optional, Sequence, Tuple, Union

import numpy as np

import torch
import torch.nn as nn
import torch.nn.functional as F

from ._tracing import NotTraced

__all__ = ["adaptive_avg_pool2d_static", "StaticAdaptiveAvgPool2d", "replace_adaptive_avg_pool2d",
           "patch_adaptive_avg_pool2d", "is_adaptive_pool_export_error"]

_original_adaptive_avg_pool2d = F.adaptive_avg_pool2d


def _pair(output_size) -> Tuple[Optional[int], Optional[int]]:
    if isinstance(output_size, int):
        return output_size, output_size
    a, b = tuple(output_size)
    return a, b


def _bins_matrix(n_in: int, n_out: int, dtype, device) -> torch.Tensor:
    """[n_out, n_in] averaging matrix of adaptive pooling along one axis.

    Built in numpy and outside the tracer, so an export records it as one constant (built with
    tensor ops it became a few hundred nodes of the graph)."""
    m = np.zeros((n_out, n_in), dtype=np.float64)
    for i in range(n_out):
        s = (i * n_in) // n_out
        e = -((-(i + 1) * n_in) // n_out)  # ceil((i+1)*n_in/n_out)
        m[i, s:e] = 1.0 / (e - s)
    with NotTraced():
        return torch.from_numpy(m).to(dtype=dtype, device=device)


def adaptive_avg_pool2d_static(x: torch.Tensor, output_size) -> torch.Tensor:
    """``F.adaptive_avg_pool2d`` for an input whose spatial size is fixed at export time.

    x: [B, C, H, W] or [C, H, W]; output_size: int or (oh, ow), None keeps that size.
    """
    oh, ow = _pair(output_size)
    H, W = int(x.shape[-2]), int(x.shape[-1])
    oh = H if oh is None else int(oh)
    ow = W if ow is None else int(ow)
    if H % oh == 0 and W % ow == 0:
        if oh == 1 and ow == 1:
            return x.mean(dim=(-2, -1), keepdim=True)
        k = (H // oh, W // ow)
        return F.avg_pool2d(x, kernel_size=k, stride=k)
    ph = _bins_matrix(H, oh, x.dtype, x.device)          # [oh, H]
    pw = _bins_matrix(W, ow, x.dtype, x.device).t()      # [W, ow]
    return torch.matmul(torch.matmul(ph, x), pw)


class StaticAdaptiveAvgPool2d(nn.Module):
    """Exportable stand-in for ``nn.AdaptiveAvgPool2d`` (static input size)."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, x):
        return adaptive_avg_pool2d_static(x, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


def replace_adaptive_avg_pool2d(model: nn.Module) -> int:
    """Replace every ``nn.AdaptiveAvgPool2d`` in ``model`` (in place); returns how many."""
    count = 0
    for name, child in list(model.named_children()):
        if isinstance(child, nn.AdaptiveAvgPool2d):
            setattr(model, name, StaticAdaptiveAvgPool2d(child.output_size))
            count += 1
        else:
            count += replace_adaptive_avg_pool2d(child)
    return count


@contextlib.contextmanager
def patch_adaptive_avg_pool2d():
    """Within the block, ``torch.nn.functional.adaptive_avg_pool2d`` is the static form.

    Yields a list that receives ``((H, W), (oh, ow))`` for every call whose input size the
    static form froze (every call but a global 1x1 average, which stays size-independent)."""
    frozen: list = []

    def recording(x, output_size):
        oh, ow = _pair(output_size)
        if (oh, ow) != (1, 1):
            frozen.append(((int(x.shape[-2]), int(x.shape[-1])), (oh, ow)))
        return adaptive_avg_pool2d_static(x, output_size)

    F.adaptive_avg_pool2d = recording
    try:
        yield frozen
    finally:
        F.adaptive_avg_pool2d = _original_adaptive_avg_pool2d


def is_adaptive_pool_export_error(exc: BaseException) -> bool:
    msg = str(exc)
    return "adaptive" in msg and ("not factor of input size" in msg
                                  or "input size not accessible" in msg
                                  or "output_size is not constant" in msg)
