"""What `pointrt.compare` costs next to the runs it compares (docs/compare.md, "Cost").

Each measurement runs in its own process (peak RSS is per process):
  torch    one PyTorch forward of the model (no hooks)
  pointrt  one pointrt run of the exported file (session prepared, one warm-up run first)
  compare  pointrt.compare against the module, cumulative and isolated (prepare included)

    python bench/compare_overhead.py [--model pvn3d_pointnet2] [--points 12288] [--threads 1]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _model(name: str, points: int):
    import torch
    sys.path.insert(0, ROOT)
    torch.manual_seed(0)
    if name == "pvn3d_pointnet2":
        from models import pvn3d_pointnet2 as m
        return m.Pointnet2MSG(input_channels=6).eval(), (m.example_input(points),)
    if name == "pvn3d_full":
        from models import pvn3d_full as m  # lands with the export work (issue 9)
        return m.build(num_points=points).eval(), tuple(m.example_inputs(num_points=points))
    raise SystemExit(f"unknown model {name}")


def _flatten(out) -> list:
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _flatten(o)]
    return [out]


def _child(what: str, a) -> dict:
    import torch
    torch.set_num_threads(a.threads)
    model, args = _model(a.model, a.points)
    path = os.path.join(a.dir, f"{a.model}.onnx")
    out: dict = {}
    if what == "export":
        import pointrt
        with torch.no_grad():
            n_out = len(_flatten(model(*args)))
        pointrt.export(model, args, path, input_names=[f"in{i}" for i in range(len(args))],
                       output_names=[f"out{i}" for i in range(n_out)], verify=False, quiet=True)
    elif what == "torch":
        with torch.no_grad():
            model(*args)  # warm-up
            t0 = time.perf_counter()
            model(*args)
            out["seconds"] = time.perf_counter() - t0
    elif what == "pointrt":
        from pointrt.runtime import load_runtime
        sess = load_runtime().Session(path, threads=a.threads)
        feeds = {f"in{i}": x.numpy() for i, x in enumerate(args)}
        sess.run(feeds)
        t0 = time.perf_counter()
        sess.run(feeds)
        out["seconds"] = time.perf_counter() - t0
    elif what == "compare":
        import pointrt
        t0 = time.perf_counter()
        r = pointrt.compare(path, args, model, threads=a.threads)
        out["seconds"] = time.perf_counter() - t0
        out.update(parts=r.seconds, compared_mib=r.compared_mib, layers=len(r.modes["isolated"]),
                   first_over={m: (f.label if (f := r.first_over(m)) else None) for m in r.modes})
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="pvn3d_pointnet2")
    ap.add_argument("--points", type=int, default=12288)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--dir", default="/tmp/pointrt_compare_bench")
    ap.add_argument("--child", default="")
    a = ap.parse_args()
    if a.child:
        print(json.dumps(_child(a.child, a)))
        return
    os.makedirs(a.dir, exist_ok=True)
    res = {}
    for what in ("export", "torch", "pointrt", "compare"):
        cmd = [sys.executable, __file__, "--child", what, "--model", a.model, "--points", str(a.points),
               "--threads", str(a.threads), "--dir", a.dir]
        p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, OMP_WAIT_POLICY="passive"))
        if p.returncode:
            raise SystemExit(f"{what} failed:\n{p.stderr[-3000:]}")
        res[what] = json.loads(p.stdout.strip().splitlines()[-1])
    budget = 3 * (res["torch"]["seconds"] + res["pointrt"]["seconds"])
    mem_budget = max(res["torch"]["peak_rss_mib"], res["pointrt"]["peak_rss_mib"]) + res["compare"]["compared_mib"]
    print(json.dumps(res, indent=1))
    print(f"compare {res['compare']['seconds']:.2f} s vs budget 3 x (torch {res['torch']['seconds']:.2f} + pointrt "
          f"{res['pointrt']['seconds']:.2f}) = {budget:.2f} s: ratio {res['compare']['seconds'] / budget:.2f}")
    print(f"compare peak RSS {res['compare']['peak_rss_mib']:.0f} MiB vs max(torch, pointrt) + compared tensors = "
          f"{mem_budget:.0f} MiB")


if __name__ == "__main__":
    main()
