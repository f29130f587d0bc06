"""Writes the committed seed corpus of the fuzz targets (tests/fuzz/corpus/<target>/): every
hostile input of issue 12 (tests/python/hostile_models.py), valid files of each kind, the demo's
sample clouds, and seeds in fuzz_run's input format (tests/fuzz/fuzz_run.cc). Deterministic:
rerunning it rewrites the same files. Files other targets' fuzzing found (crash-*) are kept.

    .venv/bin/python tests/fuzz/make_corpus.py
"""
from __future__ import annotations

import io
import sys
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))
from hostile_models import (floats, hostile_files, hostile_models, npy_bytes, relu, PCD_XYZ,  # noqa: E402
                            XYZ_PLY)

CORPUS = ROOT / "tests" / "fuzz" / "corpus"
SAMPLES = ROOT / "models" / "demo" / "samples"
# fuzz_run's models in order, with their symbolic dimensions (first appearance) and inputs.
RUN_MODELS = [("elementwise", 2, 2), ("shapes", 3, 5), ("pointnet2", 4, 5), ("sparse_points", 1, 1),
              ("sparse_sites", 1, 2)]


def npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def npz(compressed: bool, **arrays: np.ndarray) -> bytes:
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def loader_seeds() -> dict:
    seeds = {name: m.SerializeToString() for name, m in hostile_models().items()}
    seeds["relu_symbolic.onnx"] = relu(["N", 3]).SerializeToString()
    return seeds


def run_seeds() -> dict:
    """Per model: plain small values, raw values, special floats, and empty / largest dims."""
    rng = np.random.default_rng(12)
    seeds = {}
    for index, (name, n_symbols, n_inputs) in enumerate(RUN_MODELS):
        for mode, dims in ((0, [5] * n_symbols), (1, [3] * n_symbols), (2, [4] * n_symbols), (0, [0] * n_symbols),
                           (0, [63] * n_symbols)):
            data = bytearray([index] + dims)
            for _ in range(n_inputs):
                data.append(mode)
                data += rng.integers(0, 256, 256, dtype=np.uint8).tobytes()
            seeds[f"{name}_mode{mode}_dims{dims[0]}"] = bytes(data)
    return seeds


def array_seeds() -> dict:
    seeds = {k: v for k, v in hostile_files().items() if k.endswith(".npy")}
    seeds["float32.npy"] = npy(np.arange(12, dtype=np.float32).reshape(3, 4))
    seeds["bigendian.npy"] = npy(np.arange(6, dtype=">f8"))
    seeds["int64_scalar.npy"] = npy(np.array(7, np.int64))
    seeds["bool_empty.npy"] = npy(np.zeros((0, 3), bool))
    seeds["v2_header.npy"] = npy_bytes("<i4", "(2,)", np.arange(2, dtype="<i4").tobytes()).replace(
        b"\x93NUMPY\x01\x00", b"\x93NUMPY\x02\x00", 1)
    seeds["sample_cloud.npy"] = (SAMPLES / "1_box.npy").read_bytes()[:2048]
    return seeds


def npz_seeds() -> dict:
    a, b = np.arange(10, dtype=np.float32), np.ones((2, 3), np.int32)
    seeds = {"stored.npz": npz(False, a=a, b=b), "deflated.npz": npz(True, a=a, b=b)}
    seeds["truncated.npz"] = seeds["deflated.npz"][:-30]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("notes.txt", "not an array")
    seeds["non_npy_member.npz"] = buf.getvalue()
    return seeds


def cloud_seeds() -> tuple:
    files = hostile_files()
    ply = {k: v for k, v in files.items() if k.endswith(".ply")}
    ply["ascii.ply"] = ("ply\nformat ascii 1.0\nelement vertex 2\n" + XYZ_PLY +
                        "property uchar red\nelement face 0\nproperty list uchar int vertex_indices\nend_header\n"
                        "1 2 3 255\n-1 -2 -3.5 7\n").encode()
    ply["binary.ply"] = ("ply\nformat binary_little_endian 1.0\nelement vertex 2\n" + XYZ_PLY +
                         "end_header\n").encode() + floats([1, 2, 3, 4, 5, 6])
    ply["sample_cylinder.ply"] = (SAMPLES / "2_cylinder.ply").read_bytes()[:4096]
    pcd = {k: v for k, v in files.items() if k.endswith(".pcd")}
    pcd["ascii.pcd"] = (PCD_XYZ + "WIDTH 2\nHEIGHT 1\nPOINTS 2\nDATA ascii\n1 2 3\n4 5 6\n").encode()
    pcd["binary_padded.pcd"] = (b"FIELDS x y z _\nSIZE 4 4 4 4\nTYPE F F F F\nCOUNT 1 1 1 1\nPOINTS 1\nDATA binary\n" +
                                floats([1, 2, 3, 0]))
    pcd["sample_torus.pcd"] = (SAMPLES / "4_torus.pcd").read_bytes()[:4096]
    # fuzz_bin: the first byte is the floats per point.
    binary = {"kitti.bin": bytes([4]) + (SAMPLES / "0_sphere.bin").read_bytes()[:1024],
              "nuscenes.bin": bytes([5]) + floats(range(10)), "not_whole.bin": bytes([4]) + files["not_whole_points.bin"]}
    return ply, pcd, binary


def main() -> None:
    ply, pcd, binary = cloud_seeds()
    targets = {"loader": loader_seeds(), "run": run_seeds(), "npy": array_seeds(), "npz": npz_seeds(), "ply": ply,
               "pcd": pcd, "bin": binary}
    for target, seeds in targets.items():
        folder = CORPUS / target
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in seeds.items():
            (folder / name).write_bytes(data)
        print(f"{target}: {len(seeds)} seeds in {folder.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
