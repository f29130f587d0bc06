"""PyTorch side of pointrt: the ``pointrt`` operators as autograd Functions (``ops``), drop-in
PointNet++ building blocks (``pointnet2``), export fixes (``patches``), ``mark`` (name a
tensor for ``pointrt.compare``), ``adopt`` (pointrt operators for yanx27-style pure-PyTorch
PointNet++ code) and ``load_checkpoint`` (weights of any torch/pickle checkpoint, no code run)."""
from . import ops  # noqa: F401
from . import _ops_library  # noqa: F401  (torch.library registration on torch >= 2.4)
from .mark import mark  # noqa: F401
from .adopt import adopt, adopt_report, adopted  # noqa: F401  (the function shadows the submodule's name)
from .checkpoint import load_checkpoint  # noqa: F401
