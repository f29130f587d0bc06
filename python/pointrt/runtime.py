"""Lazy access to the compiled runtime module ``pointrt._pointrt`` (pybind11).

The module is built by CMake (target ``_pointrt``) into ``<build>/python``.  It is found as
``pointrt._pointrt`` when it sits in the package directory, or in the directory named by the
environment variable ``POINTRT_EXT_DIR``, or in ``build*/python`` of the source checkout that
holds this package (an editable install).

API used here: ``_pointrt.Session(path)``, ``.input_names``, ``.output_names``,
``.run({name: np.ndarray}) -> {name: np.ndarray}``.
"""
import glob
import importlib
import os
from typing import List, NamedTuple, Optional

import pointrt


class RuntimeStatus(NamedTuple):
    module: Optional[object]   # the imported module, or None
    present: bool              # a module file was found (or imported)
    reason: str                # why it is unavailable ("" when loaded)


_cache: Optional[RuntimeStatus] = None


def _candidate_dirs() -> List[str]:
    dirs = []
    env = os.environ.get("POINTRT_EXT_DIR")
    if env:
        dirs.append(env)
    pkg = os.path.dirname(os.path.abspath(pointrt.__file__))
    root = os.path.dirname(os.path.dirname(pkg))  # <repo>/python/pointrt -> <repo>
    dirs += sorted(glob.glob(os.path.join(root, "build*", "python")))
    return dirs


def _has_ext(d: str) -> bool:
    return bool(glob.glob(os.path.join(d, "_pointrt*.so")) or
                glob.glob(os.path.join(d, "_pointrt*.pyd")))


def _try_import():
    try:
        return importlib.import_module("pointrt._pointrt"), None
    except ModuleNotFoundError as e:
        if e.name == "pointrt._pointrt":
            return None, None          # absent
        return None, e                 # present, but a dependency is missing
    except ImportError as e:           # present but broken (undefined symbol, ...)
        return None, e


def runtime_status(refresh: bool = False) -> RuntimeStatus:
    """Find and import ``pointrt._pointrt`` once; never raises."""
    global _cache
    if _cache is not None and not refresh:
        return _cache
    mod, err = _try_import()
    if mod is not None:
        _cache = RuntimeStatus(mod, True, "")
        return _cache
    if err is not None:
        _cache = RuntimeStatus(None, True, f"pointrt._pointrt exists but fails to import: {err}")
        return _cache
    for d in _candidate_dirs():
        if not _has_ext(d):
            continue
        if d not in pointrt.__path__:
            pointrt.__path__.append(d)
        mod, err = _try_import()
        if mod is not None:
            _cache = RuntimeStatus(mod, True, "")
        else:
            _cache = RuntimeStatus(None, True, f"{d}/_pointrt*.so fails to import: {err}")
        return _cache
    _cache = RuntimeStatus(None, False,
                           "the compiled module pointrt._pointrt is absent (not in the package, "
                           "not in $POINTRT_EXT_DIR, not in build*/python of this checkout); "
                           "build the CMake target _pointrt or set POINTRT_EXT_DIR")
    return _cache


def load_runtime():
    """Return the ``pointrt._pointrt`` module or None."""
    return runtime_status().module
