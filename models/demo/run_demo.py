"""The README's demo: a PointNet++ classifier, exported to one ONNX file, run by pointrt.

1. `pointrt inspect` the bundled model (FurthestPointSample, BallQuery, GroupPoints ... in one file);
2. `pointrt run` it on the bundled sample clouds (.npy and a KITTI-style .bin) and print the
   predicted classes;
3. generate the held-out test set (models/shapes.py, seed from testset.json), classify it with the
   runtime's Python bindings and print the accuracy, with PyTorch's on the same clouds.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "models" / "demo"
CLI = ROOT / "build" / "pointrt"
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT))

from models.common import run_cli  # noqa: E402


def sh(*args) -> str:
    return run_cli(ROOT, *args)


def main() -> None:
    model = DEMO / "shape_classifier.onnx"
    recipe = json.loads((DEMO / "testset.json").read_text())
    print("== 1. the model: one ONNX file with the PointNet++ operators\n")
    info = sh(CLI, "inspect", model)
    print("\n".join(line for line in info.splitlines() if not line.startswith("      1  ")) + "\n")

    print("== 2. the pointrt CLI on the bundled sample clouds\n")
    samples = sorted(p for p in (DEMO / "samples").iterdir() if p.suffix in (".npy", ".bin", ".ply", ".pcd") and p.stem != "expected_logits")
    for sample in samples:
        out = sh(CLI, "run", model, "--input", f"points={sample}", "--labels", DEMO / "labels.txt", "--top", "2")
        predicted = [line for line in out.splitlines() if line.startswith("predicted:")][0]
        truth = sample.stem.split("_", 1)[1]
        print(f"   {sample.name:16s} true: {truth:9s} {predicted}\n")

    print("== 3. accuracy on the generated test set\n")
    from models.shapes import make_dataset
    from pointrt import _pointrt

    spec = recipe["test_set"]
    clouds, labels = make_dataset(spec["num_per_class"], spec["num_points"], spec["seed"])
    clouds = np.asarray(clouds, dtype=np.float32)
    labels = np.asarray(labels)
    session = _pointrt.Session(str(model), threads=2)
    start = time.perf_counter()
    logits = np.stack([session.run({"points": c[None]})["logits"][0] for c in clouds])
    elapsed = time.perf_counter() - start
    predictions = logits.argmax(1)
    accuracy = float((predictions == labels).mean())
    classes = recipe["classes"]
    print(f"   {len(labels)} clouds of {spec['num_points']} points ({', '.join(classes)}), "
          f"make_dataset(seed={spec['seed']})")
    print(f"   pointrt accuracy: {100 * accuracy:.1f}%   ({1000 * elapsed / len(labels):.2f} ms per cloud, 2 threads)")
    for c, name in enumerate(classes):
        mask = labels == c
        print(f"     {name:9s} {100 * float((predictions[mask] == c).mean()):5.1f}%")
    if "test_accuracy" in recipe:
        print(f"   PyTorch's accuracy on the same set, recorded at training time: {100 * recipe['test_accuracy']:.1f}%")


if __name__ == "__main__":
    main()
