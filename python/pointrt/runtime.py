"""Access to the compiled runtime module ``pointrt._pointrt`` (pybind11).

``pip install ./python`` builds it into the installed package; in a source checkout CMake
(target ``_pointrt``) builds it into ``python/pointrt/``. A module built elsewhere is found
through the environment variable ``POINTRT_EXT_DIR`` (read when ``pointrt`` is imported).

API: ``Session(path, threads=0, optimize=True, max_tensor_bytes=None, external_data_dirs=(),
observe=())``, ``.inputs`` / ``.outputs`` (``ValueInfo``: name, dtype, shape), ``.input_names``,
``.output_names``, ``.run({name: array}, nonfinite="warn", on_value=None) -> {name: np.ndarray}``
(``on_value(name, array)`` sees each ``observe``d value as it is computed), ``.execution_plan()``,
and ``supported_ops()`` / ``build_info()`` / ``operator_schemas()`` (the pointrt-domain operators'
ONNX schemas: inputs, outputs, attributes with type, required and default).
"""
import importlib
from typing import NamedTuple, Optional


class RuntimeStatus(NamedTuple):
    module: Optional[object]   # the imported module, or None
    present: bool              # a module file was found (or imported)
    reason: str                # why it is unavailable ("" when loaded)


_cache: Optional[RuntimeStatus] = None


def runtime_status(refresh: bool = False) -> RuntimeStatus:
    """Import ``pointrt._pointrt`` once; never raises."""
    global _cache
    if _cache is not None and not refresh:
        return _cache
    try:
        _cache = RuntimeStatus(importlib.import_module("pointrt._pointrt"), True, "")
    except ModuleNotFoundError as e:
        if e.name == "pointrt._pointrt":
            _cache = RuntimeStatus(None, False,
                                   "the compiled module pointrt._pointrt is absent (install the package with "
                                   "`pip install ./python`, build the CMake target _pointrt, or set "
                                   "POINTRT_EXT_DIR to the folder holding it)")
        else:  # present, but a dependency is missing
            _cache = RuntimeStatus(None, True, f"pointrt._pointrt exists but fails to import: {e}")
    except ImportError as e:  # present but broken (undefined symbol, ...)
        _cache = RuntimeStatus(None, True, f"pointrt._pointrt exists but fails to import: {e}")
    return _cache


def load_runtime():
    """Return the ``pointrt._pointrt`` module or None."""
    return runtime_status().module
