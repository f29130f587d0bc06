#!/usr/bin/env python3
"""Side-by-side latency of pointrt and ONNX Runtime on the same ONNX files.

Builds three networks in plain PyTorch (no torchvision needed), exports each once with
torch.onnx.export (opset 13, eval mode, so BatchNorm is in inference form), then for every
model and thread count runs, in separate processes and alternating so that machine noise hits
both alike:

  pointrt:      build/pointrt bench MODEL --threads T --input x=INPUT.npy --json OUT.json
  onnxruntime:  this script's --ort-worker mode (InferenceSession, intra_op_num_threads=T,
                inter_op 1, sequential, all graph optimisations)

Each process does `--warmup` untimed runs and `--iterations` timed runs and reports its median
latency and its peak RSS (getrusage). The table shows the median over `--repeats` processes of
those medians, the ratio pointrt / ORT (< 1: pointrt is faster), the best single run of each
(min, less sensitive to other load on the machine) and peak RSS. pointrt runs with
OMP_WAIT_POLICY=passive unless --omp-wait-policy says otherwise (see its help). Peak RSS of the
ORT worker includes the Python interpreter and numpy (about 30 MiB). Before timing, both
runtimes' outputs on the same input are compared (max |difference|).

Models:
  resnet18   ResNet-18 classifier, 1x3x224x224 (BasicBlock, BatchNorm, 1000-way FC)
  pspnet     PSPNet-style segmenter, 1x3x480x640: ResNet-18 backbone dilated to output
             stride 8 (layer3 dilation 2, layer4 dilation 4), pyramid pooling with bins
             (1, 2, 5, 10) (all divide the 60x80 feature map, so the export is plain
             AveragePool), 1x1 conv + BN + ReLU per bin, bilinear upsampling, concat, 3x3 conv,
             21-class 1x1 conv, bilinear upsampling to the input size
  pointnet   PointNet shared MLP on 16384 points: Conv1d 1x1 3->64->128->1024 with BN + ReLU,
             then max over points (ReduceMax)
  lstm       one-layer LSTM (torch.nn.LSTM 256 -> 256), sequence 64, batch 8: input 64x8x256
  gru        one-layer GRU, same sizes (torch exports linear_before_reset = 1)
  rnn        one-layer tanh RNN, same sizes
  <model>_int8  the model quantized by ONNX Runtime's quantize_static (QDQ, per-channel int8
             weights, int8 activations; models/int8_qdq.py), e.g. resnet18_int8 pointnet_int8

Run (from the repository root, after building):
  .venv/bin/python bench/compare_onnxruntime.py --pointrt build/pointrt
  .venv/bin/python bench/compare_onnxruntime.py --pointrt build/pointrt --models lstm gru rnn
  .venv/bin/python bench/compare_onnxruntime.py --pointrt build/pointrt --models resnet18 resnet18_int8
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


# ----------------------------------------------------------------------------- ORT worker
def ort_worker(args):
    import numpy as np
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    t0 = time.perf_counter()
    sess = ort.InferenceSession(args.model, so, providers=["CPUExecutionProvider"])
    prepare_ms = (time.perf_counter() - t0) * 1e3
    x = np.load(args.input)
    feeds = {sess.get_inputs()[0].name: x}
    if args.save_output:
        np.save(args.save_output, sess.run(None, feeds)[0])
    for _ in range(args.warmup):
        sess.run(None, feeds)
    times = []
    for _ in range(args.iterations):
        t = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t) * 1e3)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps({"median_ms": statistics.median(times), "min_ms": min(times), "peak_rss_mib": rss,
                      "prepare_ms": prepare_ms}))


# ----------------------------------------------------------------------------- models
def build_models():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride=1, dilation=1):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, padding=dilation, dilation=dilation, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, padding=dilation, dilation=dilation, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            idt = x if self.down is None else self.down(x)
            y = F.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return F.relu(y + idt)

    class ResNet18(nn.Module):
        def __init__(self, num_classes=1000, dilate=(False, False)):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.pool = nn.MaxPool2d(3, 2, 1)
            self.layer1 = nn.Sequential(BasicBlock(64, 64), BasicBlock(64, 64))
            self.layer2 = nn.Sequential(BasicBlock(64, 128, 2), BasicBlock(128, 128))
            d3, d4 = (2 if dilate[0] else 1), (4 if dilate[1] else (2 if dilate[0] else 1))
            s3, s4 = (1 if dilate[0] else 2), (1 if dilate[1] else 2)
            self.layer3 = nn.Sequential(BasicBlock(128, 256, s3, d3 if s3 == 1 else 1), BasicBlock(256, 256, 1, d3))
            self.layer4 = nn.Sequential(BasicBlock(256, 512, s4, d4 if s4 == 1 else 1), BasicBlock(512, 512, 1, d4))
            self.fc = nn.Linear(512, num_classes) if num_classes else None

        def features(self, x):
            x = self.pool(F.relu(self.bn1(self.conv1(x))))
            return self.layer4(self.layer3(self.layer2(self.layer1(x))))

        def forward(self, x):
            x = F.adaptive_avg_pool2d(self.features(x), 1)
            return self.fc(torch.flatten(x, 1))

    class PSPNet(nn.Module):
        def __init__(self, classes=21, bins=(1, 2, 5, 10)):
            super().__init__()
            self.backbone = ResNet18(num_classes=0, dilate=(True, True))
            self.bins = bins
            self.stages = nn.ModuleList(
                [nn.Sequential(nn.Conv2d(512, 128, 1, bias=False), nn.BatchNorm2d(128), nn.ReLU()) for _ in bins])
            self.bottleneck = nn.Sequential(nn.Conv2d(512 + 128 * len(bins), 256, 3, padding=1, bias=False),
                                            nn.BatchNorm2d(256), nn.ReLU())
            self.classifier = nn.Conv2d(256, classes, 1)

        def forward(self, x):
            h, w = x.shape[2:]
            f = self.backbone.features(x)
            fh, fw = f.shape[2:]
            pyramid = [f]
            for b, stage in zip(self.bins, self.stages):
                p = F.adaptive_avg_pool2d(f, b)
                pyramid.append(F.interpolate(stage(p), size=(fh, fw), mode="bilinear", align_corners=False))
            y = self.classifier(self.bottleneck(torch.cat(pyramid, 1)))
            return F.interpolate(y, size=(h, w), mode="bilinear", align_corners=False)

    class PointNetMLP(nn.Module):
        def __init__(self):
            super().__init__()
            layers, c = [], 3
            for o in (64, 128, 1024):
                layers += [nn.Conv1d(c, o, 1), nn.BatchNorm1d(o), nn.ReLU()]
                c = o
            self.mlp = nn.Sequential(*layers)

        def forward(self, x):
            return self.mlp(x).amax(dim=2)

    def randomize_bn(m):
        # Non-trivial BatchNorm statistics so that folding is exercised for real.
        g = torch.Generator().manual_seed(0)
        for mod in m.modules():
            if isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d)):
                n = mod.num_features
                mod.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
                mod.running_var.copy_(torch.rand(n, generator=g) + 0.5)
                mod.weight.data.copy_(torch.rand(n, generator=g) + 0.5)
                mod.bias.data.copy_(torch.randn(n, generator=g) * 0.1)
        return m.eval()

    class Recurrent(nn.Module):
        def __init__(self, kind):
            super().__init__()
            self.rnn = getattr(nn, kind)(256, 256)
        def forward(self, x):
            return self.rnn(x)[0]
    torch.manual_seed(0)
    return {
        "resnet18": (randomize_bn(ResNet18()), (1, 3, 224, 224)),
        "pspnet": (randomize_bn(PSPNet()), (1, 3, 480, 640)),
        "pointnet": (randomize_bn(PointNetMLP()), (1, 3, 16384)),
        "lstm": (Recurrent("LSTM").eval(), (64, 8, 256)),
        "gru": (Recurrent("GRU").eval(), (64, 8, 256)),
        "rnn": (Recurrent("RNN").eval(), (64, 8, 256)),
    }


def export(name, model, shape, out_dir):
    import numpy as np
    import torch

    path = os.path.join(out_dir, name + ".onnx")
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
    if not os.path.exists(path):
        with torch.no_grad():
            torch.onnx.export(model, (x,), path, opset_version=13, input_names=["x"], output_names=["y"],
                              do_constant_folding=True)
    npy = os.path.join(out_dir, name + "_x.npy")
    np.save(npy, x.numpy())
    return path, npy


# ----------------------------------------------------------------------------- runs
def run_pointrt(args, model, npy, threads, out_json):
    cmd = [args.pointrt, "bench", model, "--threads", str(threads), "--input", "x=" + npy, "--warmup",
           str(args.warmup), "--iterations", str(args.iterations), "--json", out_json]
    env = dict(os.environ)
    if args.omp_wait_policy != "default":
        env["OMP_WAIT_POLICY"] = args.omp_wait_policy
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError("pointrt failed: " + " ".join(cmd) + "\n" + r.stdout + r.stderr)
    with open(out_json) as f:
        return json.load(f)


def run_ort(args, model, npy, threads, save_output=None):
    cmd = [sys.executable, os.path.abspath(__file__), "--ort-worker", "--model", model, "--input", npy, "--threads",
           str(threads), "--warmup", str(args.warmup), "--iterations", str(args.iterations)]
    if save_output:
        cmd += ["--save-output", save_output]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError("onnxruntime worker failed:\n" + r.stdout + r.stderr)
    return json.loads(r.stdout.strip().splitlines()[-1])


def compare_worker(args):
    import numpy as np

    a, b = np.load(args.model), np.load(args.input)
    if a.shape != b.shape:
        print(f"shape mismatch {a.shape} vs {b.shape}")
    else:
        print(f"max |pointrt - ort| = {float(np.max(np.abs(a - b))):.2e} (max |ort| {float(np.max(np.abs(b))):.2e})")


def export_worker(args):
    models = build_models()
    for name in args.models:
        base = name[: -len(INT8_SUFFIX)] if name.endswith(INT8_SUFFIX) else name
        net, shape = models[base]
        path, npy = export(base, net, shape, args.work_dir)
        if base != name:
            path = quantized(path, os.path.join(args.work_dir, name + ".onnx"))
        print(json.dumps({"name": name, "path": path, "npy": npy, "shape": list(shape)}))


# `<model>_int8`: the float export quantized by ONNX Runtime's quantize_static (QDQ, per-channel
# int8 weights, int8 activations, MinMax on 4 seeded inputs: models/int8_qdq.py).
INT8_SUFFIX = "_int8"


def quantized(float_path, out_path):
    if not os.path.exists(out_path):
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        from models import int8_qdq

        int8_qdq.quantize(float_path, out_path, "qdq", per_channel=True)
    return out_path


def check_outputs(args, name, model, npy, work):
    ort_out = os.path.join(work, name + "_ort_y.npy")
    saved = (args.warmup, args.iterations)
    args.warmup, args.iterations = 0, 1
    run_ort(args, model, npy, 1, save_output=ort_out)
    args.warmup, args.iterations = saved
    out_dir = os.path.join(work, name + "_pointrt_out")
    r = subprocess.run([args.pointrt, "run", model, "--threads", "1", "--input", "x=" + npy, "--output-dir", out_dir],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return "pointrt run failed: " + (r.stderr.strip() or r.stdout.strip())[:400]
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--compare-worker", "--model",
                        os.path.join(out_dir, "y.npy"), "--input", ort_out], capture_output=True, text=True)
    return r.stdout.strip() or r.stderr.strip()[-400:]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pointrt", default="build/pointrt", help="the pointrt command-line binary")
    ap.add_argument("--models", nargs="+", default=["resnet18", "pspnet", "pointnet"])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--repeats", type=int, default=3, help="processes per (runtime, model, threads)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--work-dir", default=os.path.join(tempfile.gettempdir(), "pointrt_bench"))
    ap.add_argument("--omp-wait-policy", default="passive", choices=["passive", "active", "default"],
                    help="OMP_WAIT_POLICY for pointrt (GNU OpenMP). On a shared, oversubscribed machine the "
                         "default spin-wait makes every oneDNN parallel region wait for a descheduled thread; "
                         "'passive' sleeps instead. 'default' leaves the environment alone.")
    # worker mode
    ap.add_argument("--ort-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--export-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--compare-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--input", help=argparse.SUPPRESS)
    ap.add_argument("--save-output", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.ort_worker:
        args.threads = args.threads[0] if isinstance(args.threads, list) else args.threads
        return ort_worker(args)
    if args.compare_worker:
        return compare_worker(args)
    os.makedirs(args.work_dir, exist_ok=True)
    if args.export_worker:
        return export_worker(args)

    # This process stays lean (no torch, no numpy): Linux carries a parent's peak RSS into a
    # child's ru_maxrss across fork+exec, so a fat parent would inflate every child's number.
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--export-worker", "--work-dir", args.work_dir,
                        "--models", *args.models], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("export failed:\n" + r.stderr[-2000:])
    exported = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    rows = []
    for e in exported:
        name, path, npy, shape = e["name"], e["path"], e["npy"], e["shape"]
        print(f"# {name}: {path} input {shape}; {check_outputs(args, name, path, npy, args.work_dir)}", flush=True)
        for t in args.threads:
            prt, ort_r = [], []
            for rep in range(args.repeats):  # alternate so that noise hits both
                prt.append(run_pointrt(args, path, npy, t, os.path.join(args.work_dir, f"{name}_t{t}_{rep}.json")))
                ort_r.append(run_ort(args, path, npy, t))
            p_ms = statistics.median(r["median_ms"] for r in prt)
            o_ms = statistics.median(r["median_ms"] for r in ort_r)
            p_min = min(r["min_ms"] for r in prt)
            o_min = min(r["min_ms"] for r in ort_r)
            row = dict(model=name, threads=t, pointrt_ms=p_ms, ort_ms=o_ms, ratio=p_ms / o_ms, pointrt_min=p_min,
                       ort_min=o_min,
                       pointrt_all=[round(r["median_ms"], 2) for r in prt], ort_all=[round(r["median_ms"], 2) for r in ort_r],
                       pointrt_rss=max(r["peak_rss_mib"] for r in prt), ort_rss=max(r["peak_rss_mib"] for r in ort_r))
            rows.append(row)
            print(f"  {name:9s} threads={t}: pointrt {p_ms:8.2f} ms  ort {o_ms:8.2f} ms  ratio {p_ms / o_ms:5.2f}  "
                  f"(per-process medians: pointrt {row['pointrt_all']}, ort {row['ort_all']}; "
                  f"peak RSS pointrt {row['pointrt_rss']:.0f} MiB, ort {row['ort_rss']:.0f} MiB)", flush=True)
    print()
    print("| model | threads | pointrt median ms | ORT median ms | pointrt / ORT (median) | pointrt min ms | "
          "ORT min ms | pointrt / ORT (min) | peak RSS pointrt MiB | peak RSS ORT MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['threads']} | {r['pointrt_ms']:.2f} | {r['ort_ms']:.2f} | {r['ratio']:.2f} | "
              f"{r['pointrt_min']:.2f} | {r['ort_min']:.2f} | {r['pointrt_min'] / r['ort_min']:.2f} | "
              f"{r['pointrt_rss']:.0f} | {r['ort_rss']:.0f} |")


if __name__ == "__main__":
    main()
