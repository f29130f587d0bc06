"""Reference tensors on disk: ``.npz`` of named arrays, and Polygraphy's JSON.

Polygraphy (``polygraphy run --save-outputs f.json``) writes a ``RunResults``: ``{"lst": [[runner
name, [iteration, ...]]], "polygraphy_class": "RunResults"}``; each iteration is ``{"outputs": {name:
array}, "runtime": s, "runner_name": ..., "polygraphy_class": "IterationResult"}``, and each array
is ``{"array": base64 of numpy.save bytes, "polygraphy_class": "ndarray"}``, wrapped by newer
versions in ``{"values": ..., "polygraphy_class": "LazyNumpyArray"}``. ``--save-inputs`` writes a
JSON list of ``{name: array}`` feed dicts. Both are read and written here without Polygraphy.
"""
import base64
import io
import json
import os
from typing import Any, Dict, List, Optional

import numpy as np

__all__ = ["read_arrays", "write_arrays", "read_polygraphy_json", "write_polygraphy_json"]


def _decode_array(obj: Any, where: str) -> np.ndarray:
    if isinstance(obj, dict) and "values" in obj:
        return _decode_array(obj["values"], where)
    if not (isinstance(obj, dict) and isinstance(obj.get("array"), str)):
        raise ValueError(f"{where}: not an encoded array (expected {{\"array\": <base64 .npy>}})")
    return np.load(io.BytesIO(base64.b64decode(obj["array"], validate=True)), allow_pickle=False)


def _encode_array(a: np.ndarray) -> Dict[str, Any]:
    buf = io.BytesIO()
    np.save(buf, np.asarray(a), allow_pickle=False)
    arr = {"array": base64.b64encode(buf.getvalue()).decode(), "polygraphy_class": "ndarray"}
    return {"values": arr, "polygraphy_class": "LazyNumpyArray"}


def read_polygraphy_json(path: str, runner: Optional[str] = None) -> Dict[str, np.ndarray]:
    """Arrays of a Polygraphy RunResults file (first iteration of ``runner``, default the first
    runner), or of the first feed dict of a ``--save-inputs`` file."""
    with open(path) as f:
        doc = json.load(f)
    if isinstance(doc, list):  # --save-inputs: a list of feed dicts
        if not doc or not isinstance(doc[0], dict):
            raise ValueError(f"{path}: an empty or malformed list of Polygraphy feed dicts")
        return {k: _decode_array(v, f"{path}: '{k}'") for k, v in doc[0].items()}
    if not isinstance(doc, dict) or not isinstance(doc.get("lst"), list):
        raise ValueError(f"{path}: not Polygraphy run results (no \"lst\" list of runners)")
    names = []
    for entry in doc["lst"]:
        name, iterations = entry[0], entry[1]
        names.append(name)
        if runner is not None and name != runner:
            continue
        if not iterations:
            raise ValueError(f"{path}: runner '{name}' has no iterations")
        outputs = iterations[0].get("outputs", {})
        return {k: _decode_array(v, f"{path}: runner '{name}' output '{k}'") for k, v in outputs.items()}
    raise ValueError(f"{path}: no runner named '{runner}' (runners: {', '.join(names)})")


def write_polygraphy_json(path: str, arrays: Dict[str, np.ndarray], runner: str = "pointrt-runner",
                          runtime: float = 0.0) -> None:
    """Write ``arrays`` as a one-iteration RunResults that ``polygraphy run --load-outputs`` reads."""
    iteration = {"outputs": {k: _encode_array(v) for k, v in arrays.items()}, "runtime": runtime,
                 "runner_name": runner, "polygraphy_class": "IterationResult"}
    doc = {"lst": [[runner, [iteration]]], "polygraphy_class": "RunResults"}
    with open(path, "w") as f:
        json.dump(doc, f)


def read_arrays(path: str, runner: Optional[str] = None) -> Dict[str, np.ndarray]:
    """Named arrays from ``.npz`` or Polygraphy ``.json``."""
    if path.endswith(".json"):
        return read_polygraphy_json(path, runner)
    if path.endswith(".npz"):
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    raise ValueError(f"{path}: reference files are .npz (numpy.savez) or Polygraphy .json")


def write_arrays(path: str, arrays: Dict[str, np.ndarray]) -> None:
    """Write ``.npz`` or Polygraphy ``.json`` (by the extension)."""
    if path.endswith(".json"):
        write_polygraphy_json(path, arrays)
    elif path.endswith(".npz"):
        np.savez(path, **arrays)
    else:
        raise ValueError(f"{path}: write .npz or .json")


def parse_feeds(specs: List[str]) -> Dict[str, np.ndarray]:
    """``NAME=FILE.npy`` entries, or one ``.npz`` / Polygraphy inputs ``.json`` holding them all."""
    feeds: Dict[str, np.ndarray] = {}
    for spec in specs:
        if "=" in spec:
            name, file = spec.split("=", 1)
            feeds[name] = np.load(file, allow_pickle=False)
        elif os.path.splitext(spec)[1] in (".npz", ".json"):
            feeds.update(read_arrays(spec))
        else:
            raise ValueError(f"--input {spec}: give NAME=FILE.npy, or an .npz / .json holding every input")
    return feeds
