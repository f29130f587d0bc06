"""PyTorch side of pointrt: the ``pointrt`` operators as autograd Functions (``ops``), drop-in
PointNet++ building blocks (``pointnet2``), export fixes (``patches``) and ``mark`` (name a
tensor for ``pointrt.compare``)."""
from . import ops  # noqa: F401
from . import _ops_library  # noqa: F401  (torch.library registration on torch >= 2.4)
from .mark import mark  # noqa: F401
