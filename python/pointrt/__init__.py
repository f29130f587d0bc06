"""pointrt: export PyTorch point-cloud networks to one ONNX file and run them in C++.

* :class:`pointrt.Session` - the compiled runtime: ``Session(path).run({name: array})``, with
  ``inputs`` / ``outputs`` (name, dtype, shape). Built and installed by ``pip install ./python``.
* :func:`pointrt.export` - torch.onnx.export with the ``pointrt`` domain, opset selection,
  dynamic point counts, onnx.checker and verification in the runtime.
* :mod:`pointrt.torch.ops` - the ``pointrt`` PointNet++ operators as autograd Functions.
* :mod:`pointrt.torch.pointnet2` - drop-in Pointnet2_PyTorch / PVN3D ``pointnet2_utils`` and
  ``pointnet2_modules``.
* :mod:`pointrt.torch.patches` - fixes for exporter failures (adaptive average pooling).
* :class:`pointrt.Error` - the base of every error pointrt raises.
* :func:`pointrt.compare` - layer by layer, where do pointrt's values drift from PyTorch, ONNX
  Runtime or saved references (cumulative and isolated; float16 emulation); also
  ``python -m pointrt compare``.
* :func:`pointrt.torch.mark` - name a tensor so that ``compare`` lines it up.

Importing ``pointrt`` imports neither torch nor the compiled module; ``pointrt.Session`` loads
the latter on first use (from ``$POINTRT_EXT_DIR`` when set, else from the package).
"""
import os as _os

__version__ = "0.1.0"

from .errors import Error, SessionError, PointrtError, ExportError, VerificationError  # noqa: F401,E402

from .exporter import export, ExportReport, supported_opsets, default_opset  # noqa: F401,E402

from .compare_engine import compare, CompareReport, LayerResult  # noqa: F401,E402

# A compiled module built elsewhere (POINTRT_EXT_DIR) is found as pointrt._pointrt from the start,
# before one in the package folder (e.g. the sanitized build's module next to the Release one).
if _os.environ.get("POINTRT_EXT_DIR"):
    __path__.insert(0, _os.environ["POINTRT_EXT_DIR"])  # noqa: F821 (the package's own __path__)

_RUNTIME_NAMES = ("Session", "ValueInfo", "supported_ops", "build_info")


def __getattr__(name: str):
    if name in _RUNTIME_NAMES:
        from .runtime import runtime_status

        status = runtime_status()
        if status.module is None:
            raise ImportError(f"pointrt.{name} needs the compiled runtime: {status.reason}")
        return getattr(status.module, name)
    raise AttributeError(f"module 'pointrt' has no attribute '{name}'")


def __dir__():
    return sorted(list(globals()) + list(_RUNTIME_NAMES))
