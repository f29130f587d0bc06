"""Read the weights of a PyTorch checkpoint, whatever file it is, without running its code.

:func:`load_checkpoint` accepts

- ``torch.save`` zip files (torch >= 1.6) and legacy torch files
  (``_use_new_zipfile_serialization=False``, torch < 1.6), read with
  ``torch.load(weights_only=True)``. torch 1.13's weights-only reader refuses some plain data
  (any Python float, e.g. ``best_prec``: "Unsupported operand 71"); such files are read again by
  ``torch.load`` with pointrt's tensors-only unpickler below (torch's storages, pointrt's
  restricted classes), so they load on 1.13 as on 2.x;
- plain pickles (``pickle.dump`` of a dict of tensors or numpy arrays; ``torch.load`` says
  "Invalid magic number; corrupt file?"), read with a restricted unpickler that builds only
  tensors, numpy arrays, ``OrderedDict`` and Python's own containers and numbers;

and unwraps the dicts training scripts save around the state dict (``model_state``,
``state_dict``, ``model_state_dict``, ``model``, ``net``, nested ones such as
``{"model": {"state_dict": ...}}``), stripping the ``module.`` prefix of ``nn.DataParallel``.
Anything else in the file (a pickled ``nn.Module``, an optimizer class, a custom object) is
refused with one line naming it, unless ``trusted=True`` is passed: then the file goes to
``torch.load(weights_only=False)``, which can run code from the file, and ``info.trusted`` says so.
"""
from __future__ import annotations

import collections
import dataclasses
import io
import os
import pickle
import tarfile
import types
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import torch

__all__ = ["load_checkpoint", "CheckpointInfo", "CheckpointError", "WRAPPER_KEYS"]

WRAPPER_KEYS = ("model_state", "state_dict", "model_state_dict", "model", "net")
_LEGACY_MAGIC = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"  # pickled torch MAGIC_NUMBER


class CheckpointError(ValueError):
    """A file that is not a readable checkpoint; the message is one line naming the file."""


@dataclasses.dataclass
class CheckpointInfo:
    """How :func:`load_checkpoint` read ``path``: ``format`` is "torch zip", "torch legacy",
    "torch tar" or "pickle"; ``wrapper`` the keys it descended through ("model_state",
    "model/state_dict"; "" for a bare state dict); ``stripped_prefix`` the prefix removed from
    every key ("module."); ``other_keys`` the wrapper's other entries (epoch, optimizer_state...);
    ``reader`` what unpickled it: "torch.load(weights_only=True)", "torch's reader with the
    tensors-only unpickler", "tensors-only unpickler" (plain pickles), or the unrestricted
    "torch.load" / "pickle" when ``trusted``."""
    path: str
    format: str
    wrapper: str = ""
    stripped_prefix: str = ""
    other_keys: List[str] = dataclasses.field(default_factory=list)
    trusted: bool = False
    reader: str = ""

    def __str__(self) -> str:
        parts = [f"{self.path}: {self.format}"]
        parts.append(f"state dict under '{self.wrapper}'" if self.wrapper else "bare state dict")
        if self.stripped_prefix:
            parts.append(f"prefix '{self.stripped_prefix}' stripped")
        if self.trusted:
            parts.append("unpickled with trusted=True")
        return ", ".join(parts)


# ----------------------------------------------------------------------------- formats
def _sniff(path: str) -> str:
    with open(path, "rb") as f:
        head = f.read(len(_LEGACY_MAGIC))
    if head.startswith(b"PK\x03\x04"):
        return "torch zip"
    if head.startswith(_LEGACY_MAGIC):
        return "torch legacy"
    if tarfile.is_tarfile(path):
        return "torch tar"
    if len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5:  # pickle protocols 2-5
        return "pickle"
    shown = " ".join(f"{b:02x}" for b in head[:8]) or "nothing (empty file)"
    raise CheckpointError(f"{path}: not a checkpoint (starts with {shown}; expected a torch.save zip, "
                          f"a legacy torch file or a pickle)")


def _load_storage_bytes(data: bytes):
    """The storage inside a pickled tensor is a legacy torch file: read it weights-only too."""
    return torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)


_NUMPY = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
          ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
          ("numpy", "ndarray"), ("numpy", "dtype")}
_TORCH = {("torch._utils", "_rebuild_tensor_v2"), ("torch._utils", "_rebuild_parameter"),
          ("torch._utils", "_rebuild_parameter_with_state"), ("collections", "OrderedDict"),
          ("torch", "Size")}


class _TensorsOnlyUnpickler(pickle.Unpickler):
    """Builds tensors, numpy arrays and containers; any other class or function is refused."""

    def find_class(self, module: str, name: str):
        if (module, name) == ("torch.storage", "_load_from_bytes"):
            return _load_storage_bytes
        if (module, name) in _TORCH or (module, name) in _NUMPY or (
                module.startswith("numpy") and name.endswith("DType")):  # numpy >= 1.25 dtype classes
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refuses to build {module}.{name}")


_TENSORS_ONLY = types.ModuleType("pointrt_tensors_only_pickle")  # a pickle_module for torch.load
_TENSORS_ONLY.Unpickler = _TensorsOnlyUnpickler  # type: ignore[attr-defined]
_TENSORS_ONLY.load = lambda f, **kw: _TensorsOnlyUnpickler(f, **kw).load()  # type: ignore[attr-defined]


def _read(path: str, fmt: str, map_location, trusted: bool) -> Tuple[Any, str]:
    """(the unpickled object, the reader used)."""
    if fmt == "pickle":
        with open(path, "rb") as f:
            if trusted:
                return pickle.load(f), "pickle"  # noqa: S301 - the caller said trusted=True
            return _TensorsOnlyUnpickler(f).load(), "tensors-only unpickler"
    if trusted:
        return torch.load(path, map_location=map_location, weights_only=False), "torch.load"
    try:
        return torch.load(path, map_location=map_location, weights_only=True), "torch.load(weights_only=True)"
    except Exception as exc:
        if "Weights only load failed" not in str(exc):
            raise
    # torch 1.13's weights-only unpickler refuses some plain data (a Python float: "Unsupported
    # operand 71"); torch.load with the tensors-only unpickler reads those and refuses the rest.
    return _torch_load_tensors_only(path, map_location), "torch's reader with the tensors-only unpickler"


def _torch_load_tensors_only(path: str, map_location) -> Any:
    """torch.load's zip / legacy readers with :class:`_TensorsOnlyUnpickler` (torch 1.13's
    torch.load ignores ``pickle_module`` unless weights_only is off, and then uses plain pickle)."""
    serialization = torch.serialization
    with open(path, "rb") as f:
        if serialization._is_zipfile(f):
            with serialization._open_zipfile_reader(f) as archive:
                return serialization._load(archive, map_location, _TENSORS_ONLY, encoding="utf-8")
        return serialization._legacy_load(f, map_location, _TENSORS_ONLY, encoding="utf-8")


def _explain(path: str, fmt: str, exc: BaseException) -> CheckpointError:
    msg = " ".join(str(exc).split())
    if "refuses to build" in msg or "Weights only load failed" in msg:
        return CheckpointError(
            f"{path}: {fmt} file holds Python objects other than tensors and containers ({msg[:200]}); "
            "pointrt does not run code from checkpoints: save model.state_dict(), or pass trusted=True "
            "if you trust the file")
    # Anything else a reader raises on a file that starts like a checkpoint (EOFError, BadZipFile,
    # "failed finding central directory", IndexError in a cut pickle ...) means the bytes are cut or broken.
    return CheckpointError(f"{path}: truncated or damaged {fmt} file ({type(exc).__name__}: {msg[:160]})")


# ----------------------------------------------------------------------------- unwrapping
def _is_state_dict(obj: Any) -> bool:
    return isinstance(obj, dict) and len(obj) > 0 and all(
        isinstance(k, str) and isinstance(v, (torch.Tensor, np.ndarray)) for k, v in obj.items())


def _find(obj: Any, depth: int = 0) -> Optional[Tuple[Dict[str, Any], List[str], List[str]]]:
    """(state dict, wrapper keys descended through, other keys of the outermost wrapper) or None."""
    if _is_state_dict(obj):
        return obj, [], []
    if not isinstance(obj, dict) or depth >= 3:
        return None
    for key in WRAPPER_KEYS:
        found = _find(obj[key], depth + 1) if key in obj else None
        if found is not None:
            return found[0], [key] + found[1], [str(k) for k in obj if k != key]
    return None


def _unwrap(obj: Any, path: str) -> Tuple[Dict[str, Any], List[str], List[str]]:
    found = _find(obj)
    if found is not None:
        return found
    what = f"a dict with keys {sorted(map(str, obj))[:12]}" if isinstance(obj, dict) else f"a {type(obj).__name__}"
    raise CheckpointError(f"{path}: holds {what} but no state dict (a dict of tensors, bare or under "
                          f"{', '.join(WRAPPER_KEYS)})")


def _strip_prefix(state: Dict[str, Any]) -> Tuple[Dict[str, Any], str]:
    stripped = ""
    while state and all(k.startswith("module.") for k in state):
        state = collections.OrderedDict((k[len("module."):], v) for k, v in state.items())
        stripped += "module."
    return state, stripped


def load_checkpoint(path: Union[str, os.PathLike], map_location: Any = "cpu", *,
                    trusted: bool = False) -> Tuple[Dict[str, torch.Tensor], CheckpointInfo]:
    """``(state_dict, info)`` of the checkpoint at ``path`` (see the module doc for the formats).

    numpy arrays become tensors; the returned dict keeps the file's key order. ``map_location``
    is passed to ``torch.load``. Raises :class:`CheckpointError` (a ValueError) with one line
    for a missing file, a file that is no checkpoint, a truncated one, one without a state dict,
    or one holding other objects (unless ``trusted=True``, which unpickles them)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise CheckpointError(f"{path}: no such file" if not os.path.exists(path) else f"{path}: not a file")
    fmt = _sniff(path)
    try:
        obj, reader = _read(path, fmt, map_location, trusted)
    except Exception as exc:  # torch.load and pickle raise many types; each becomes one line
        raise _explain(path, fmt, exc) from exc
    state, trail, others = _unwrap(obj, path)
    state = collections.OrderedDict(
        (k, torch.from_numpy(np.array(v)) if isinstance(v, np.ndarray) else v) for k, v in state.items())
    state, stripped = _strip_prefix(state)
    return state, CheckpointInfo(path, fmt, "/".join(trail), stripped, others, trusted, reader)
