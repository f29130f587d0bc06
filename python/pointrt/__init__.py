"""pointrt: export PyTorch point-cloud networks to one ONNX file and run them in C++.

* :func:`pointrt.export` - torch.onnx.export with the ``pointrt`` domain, opset selection,
  dynamic point counts, onnx.checker and verification in the runtime.
* :mod:`pointrt.torch.ops` - the ``pointrt`` PointNet++ operators as autograd Functions.
* :mod:`pointrt.torch.pointnet2` - drop-in Pointnet2_PyTorch / PVN3D ``pointnet2_utils`` and
  ``pointnet2_modules``.
* :mod:`pointrt.torch.patches` - fixes for exporter failures (adaptive average pooling).
* :func:`pointrt.compare` - layer by layer, where do pointrt's values drift from PyTorch, ONNX
  Runtime or saved references (cumulative and isolated; float16 emulation); also
  ``python -m pointrt compare``.
* :func:`pointrt.torch.mark` - name a tensor so that ``compare`` lines it up.
* ``pointrt._pointrt`` - the compiled runtime (built by CMake), loaded lazily through
  :func:`pointrt.runtime.load_runtime`.

Importing ``pointrt`` does not import torch; ``pointrt.export`` does when called.
"""
__version__ = "0.1.0"

from .errors import PointrtError, ExportError, VerificationError  # noqa: F401,E402

from .exporter import export, ExportReport, supported_opsets, default_opset  # noqa: F401,E402

from .compare_engine import compare, CompareReport, LayerResult  # noqa: F401,E402
