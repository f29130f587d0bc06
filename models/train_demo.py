"""Train a small PointNet++ SSG classifier on the procedural shape set (models/shapes.py), on the
CPU in a few minutes, export it with pointrt.export and write sample inputs.

    python models/train_demo.py [--epochs 30] [--minutes 15] [--out models/demo] [--export-only]

Writes:
  <out>/shape_classifier.onnx   the exported model: input "points" [1, num_points, 3] float32
                                (point axis dynamic), output "logits" [1, 5]
  <out>/shape_classifier.pt     its state_dict (re-export without retraining)
  <out>/testset.json            how to regenerate the test set (seed, sizes), classes, accuracy
  <out>/samples/<i>_<class>.npy one test cloud per class, [1, num_points, 3] float32
  <out>/samples/<i>_<class>.bin the first one again as raw float32 x,y,z triples (no header)
  <out>/samples/expected_logits.npy  PyTorch logits of the .npy samples, [5, 5], in file order
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))

from models.pointnet2_ssg_cls import Pointnet2SSGCls  # noqa: E402
from models.shapes import CLASSES, make_dataset  # noqa: E402

TRAIN_SEED, TEST_SEED = 1, 2024


def build_model():
    return Pointnet2SSGCls(num_classes=len(CLASSES), input_channels=0, width=0.25,
                           npoints=(64, 16), radii=(0.4, 0.8), nsamples=(16, 16))


def augment(x, g):
    """Random rotation about a random axis, anisotropic scale and jitter (per cloud)."""
    B = x.shape[0]
    q = torch.linalg.qr(torch.randn(B, 3, 3, generator=g))[0]
    q = q * torch.sign(torch.linalg.det(q)).view(B, 1, 1)
    s = 1 + 0.1 * (torch.rand(B, 1, 3, generator=g) * 2 - 1)
    return (x @ q) * s + 0.005 * torch.randn(x.shape, generator=g)


def evaluate(model, X, y, bs=100):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(X), bs):
            correct += (model(X[i:i + bs]).argmax(1) == y[i:i + bs]).sum().item()
    return correct / len(X)


def write_artifacts(model, Xte, yte, out):
    """Samples (one test cloud per class), their PyTorch logits, and the exported ONNX file."""
    model.eval()
    os.makedirs(os.path.join(out, "samples"), exist_ok=True)
    samples, names = [], []
    for label, cname in enumerate(CLASSES):
        j = int(np.nonzero(yte.numpy() == label)[0][0])
        x = Xte[j:j + 1].numpy().copy()
        name = f"{label}_{cname}"
        np.save(os.path.join(out, "samples", name + ".npy"), x)
        if label == 0:
            x[0].astype("<f4").tofile(os.path.join(out, "samples", name + ".bin"))
        samples.append(x)
        names.append(name)
    with torch.no_grad():
        logits = model(torch.from_numpy(np.concatenate(samples))).numpy()
    np.save(os.path.join(out, "samples", "expected_logits.npy"), logits.astype(np.float32))

    import pointrt
    report = pointrt.export(model, (torch.from_numpy(samples[0]),),
                            os.path.join(out, "shape_classifier.onnx"),
                            input_names=["points"], output_names=["logits"])
    return names, logits, report


def export_only(out, test_per_class, points):
    """Re-export <out>/shape_classifier.pt (no training); updates testset.json's file facts."""
    model = build_model()
    model.load_state_dict(torch.load(os.path.join(out, "shape_classifier.pt")))
    Xte, yte = map(torch.from_numpy, make_dataset(test_per_class, points, seed=TEST_SEED))
    acc = evaluate(model, Xte, yte)
    names, logits, report = write_artifacts(model, Xte, yte, out)
    path = os.path.join(out, "testset.json")
    info = json.load(open(path)) if os.path.exists(path) else {}
    info.update({"test_accuracy": round(acc, 4), "samples": names,
                 "sample_predictions": [CLASSES[k] for k in logits.argmax(1)],
                 "onnx_bytes": report.size_bytes})
    with open(path, "w") as f:
        json.dump(info, f, indent=1)
    print(f"re-exported; test accuracy {acc:.4f}")


def main():
    ap = argparse.ArgumentParser(description="train and export the demo shape classifier")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--minutes", type=float, default=15.0, help="stop training after this long")
    ap.add_argument("--train-per-class", type=int, default=200)
    ap.add_argument("--test-per-class", type=int, default=60)
    ap.add_argument("--points", type=int, default=512)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(HERE, "demo"))
    ap.add_argument("--export-only", action="store_true",
                    help="re-export <out>/shape_classifier.pt and rewrite the samples")
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    if a.export_only:
        export_only(a.out, a.test_per_class, a.points)
        return
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    t0 = time.time()
    Xtr, ytr = make_dataset(a.train_per_class, a.points, seed=TRAIN_SEED)
    Xte, yte = make_dataset(a.test_per_class, a.points, seed=TEST_SEED)
    Xtr, ytr, Xte, yte = map(torch.from_numpy, (Xtr, ytr, Xte, yte))
    print(f"data: train {tuple(Xtr.shape)}, test {tuple(Xte.shape)} "
          f"({time.time() - t0:.1f}s)", flush=True)

    model = build_model()
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {n_params} parameters", flush=True)
    lr0 = a.lr
    opt = torch.optim.Adam(model.parameters(), lr=lr0, weight_decay=1e-4)
    bs = 32
    steps_per_epoch = (len(Xtr) + bs - 1) // bs
    t_train = time.time()
    budget = a.minutes * 60
    deadline = t_train + budget
    step = 0
    epochs_done = 0
    for epoch in range(a.epochs):
        model.train()
        perm = torch.randperm(len(Xtr), generator=g)
        tot, n = 0.0, 0
        for i in range(0, len(Xtr), bs):
            idx = perm[i:i + bs]
            if len(idx) < 2:
                continue
            x = augment(Xtr[idx], g)
            loss = F.cross_entropy(model(x), ytr[idx], label_smoothing=0.1)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            # cosine decay over whichever runs out first: the epochs or the time budget
            progress = min(1.0, max(step / (a.epochs * steps_per_epoch),
                                    (time.time() - t_train) / budget))
            for group in opt.param_groups:
                group["lr"] = lr0 * (0.02 + 0.98 * 0.5 * (1 + np.cos(np.pi * progress)))
            tot += loss.item() * len(idx)
            n += len(idx)
        epochs_done = epoch + 1
        acc = evaluate(model, Xte, yte)
        print(f"epoch {epoch + 1}: loss {tot / n:.3f}, test accuracy {acc:.3f} "
              f"({time.time() - t0:.0f}s)", flush=True)
        if time.time() > deadline:
            print("time budget reached", flush=True)
            break

    model.eval()
    acc = evaluate(model, Xte, yte)
    print(f"final test accuracy: {acc:.4f} on {len(Xte)} clouds", flush=True)

    os.makedirs(os.path.join(a.out, "samples"), exist_ok=True)
    torch.save(model.state_dict(), os.path.join(a.out, "shape_classifier.pt"))
    names, logits, report = write_artifacts(model, Xte, yte, a.out)
    info = {
        "classes": CLASSES,
        "num_points": a.points,
        "test_set": {"generator": "models/shapes.py:make_dataset", "seed": TEST_SEED,
                     "num_per_class": a.test_per_class, "num_points": a.points},
        "train_set": {"seed": TRAIN_SEED, "num_per_class": a.train_per_class},
        "epochs": epochs_done,
        "parameters": n_params,
        "test_accuracy": round(acc, 4),
        "samples": names,
        "sample_predictions": [CLASSES[k] for k in logits.argmax(1)],
        "onnx_bytes": report.size_bytes,
        "train_seconds": round(time.time() - t0),
        "torch": torch.__version__,
    }
    with open(os.path.join(a.out, "testset.json"), "w") as f:
        json.dump(info, f, indent=1)
    print(json.dumps(info, indent=1))


if __name__ == "__main__":
    main()
