"""Drop-in replacement for Pointnet2_PyTorch's ``pointnet2_ops`` and PVN3D's vendored
``lib.pointnet2_utils``: same function and class names, constructor arguments and state_dict
keys, but pure PyTorch (no CUDA extension to build) and exportable to one ONNX file whose
``pointrt`` nodes the pointrt runtime executes.

Switch one import::

    # from pointnet2_ops import pointnet2_utils                       (Pointnet2_PyTorch)
    # from lib.pointnet2_utils import pointnet2_utils                 (PVN3D)
    from pointrt.torch.pointnet2 import pointnet2_utils

    # from lib.pointnet2_utils.pointnet2_modules import PointnetSAModuleMSG, PointnetFPModule
    from pointrt.torch.pointnet2.pointnet2_modules import PointnetSAModuleMSG, PointnetFPModule
"""
from . import pointnet2_utils, pointnet2_modules  # noqa: F401
from .pointnet2_utils import (  # noqa: F401
    FurthestPointSampling, GatherOperation, BallQuery, GroupingOperation, ThreeNN,
    ThreeInterpolate, furthest_point_sample, gather_operation, ball_query,
    grouping_operation, three_nn, three_interpolate, QueryAndGroup, GroupAll,
)
from .pointnet2_modules import (  # noqa: F401
    SharedMLP, build_shared_mlp, convert_state_dict, LAYOUTS, PointnetSAModuleMSG, PointnetSAModule, PointnetFPModule,
)
