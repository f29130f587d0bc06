"""Where the pose demo loses accuracy: ADD-S when parts of the pipeline are replaced by the ground
truth, and each class's keypoint-offset error against the best guess that knows no orientation.

    PYTHONPATH=$PWD/python:$PWD python models/demo_pose/diagnose.py [--frames 20] [--weights W.pt] [--sym]

Modes: pred (the network), gtkp_predseg (true keypoint and centre offsets, predicted labels),
predkp_gtseg, gtkp_gtseg, predR_gtT (predicted rotation, true translation), gtR_predT, predctrT_I
(identity rotation, predicted translation). "(ctr - median R k)": every keypoint voted at the
predicted centre minus the keypoint's median position over random rotations (with --sym: over
their canonical equivalents), i.e. what a network that sees no orientation can best do. Frames are
the demo's held-out seeds (200000..); numbers in docs/pipelines.md.
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(ROOT, "models"), os.path.join(ROOT, "python"), ROOT]
import train_pose_demo as tpd  # noqa: E402
from models import pose_synth as ps  # noqa: E402
from pointrt import metrics  # noqa: E402
from pointrt.torch import pose as pose_ops  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--weights", default=os.path.join(ROOT, "models", "demo_pose", "pose_demo.pt"))
ap.add_argument("--frames", type=int, default=20)
ap.add_argument("--seed0", type=int, default=200_000)
ap.add_argument("--quick", action="store_true", help="only the predicted pipeline")
ap.add_argument("--sym", action="store_true", help="the model was trained on symmetric (canonical) targets "
                "(also when its training.json says so)")
ap.add_argument("--bandwidth", type=float, default=0.04)
a = ap.parse_args()
torch.set_num_threads(1)
import json  # noqa: E402
with open(os.path.join(os.path.dirname(a.weights), "training.json")) as f:
    trained = json.load(f)  # how the weights were trained (records before the layouts lack the new keys)
a.sym = a.sym or trained.get("targets") == "symmetric"
model = tpd.ReducedPVN3D(normalize_xyz=trained.get("xyz_units", "metres") == "radius")
model.load_state_dict(torch.load(a.weights))
model.eval()
mk = model.model_kps
runner = tpd.GeometryRunner(tempfile.mkdtemp(), 1, tpd.NUM_POINTS)
committed = np.load(os.path.join(os.path.dirname(a.weights), "scene.npz"))
kind = ps.scene_kind(committed)  # the frames the weights were trained on
scene = tpd.scene_description(scene=kind)
C = len(ps.CLASSES)
modes = ["pred"] if a.quick else ["pred", "gtkp_predseg", "predkp_gtseg", "gtkp_gtseg", "predR_gtT", "gtR_predT",
                                  "predctrT_I"]
res = {m: {c: [] for c in range(1, C)} for m in modes}
kperr = {c: [] for c in range(1, C)}   # per class: [K] mean L1 of pred kp offsets
blind = {c: [] for c in range(1, C)}   # rotation-blind guess (p - t_pred): L1 per keypoint
ctrerr = {c: [] for c in range(1, C)}
symerr = {c: [] for c in range(1, C)}
segacc = []
# the best orientation-blind guess: per class and keypoint the median of (R k) over random rotations
_rng = np.random.default_rng(5)
med = {}
if kind[0] == "tabletop":  # the rotations resting objects take
    table_rotations = [p[:, :3] for s in range(500) for p in ps.place_on_table(np.random.default_rng(s), (0, 1, 2, 3))[0]]
for c in range(1, C):
    k = ps.object_points(c - 1)["keypoints"]
    rk = []
    for i in range(2000):
        r = ps.random_rotation(_rng) if kind[0] == "free" else table_rotations[4 * (i % 500) + c - 1]
        rk.append(k @ (ps.canonical_rotation(c - 1, r) if a.sym else r).T)
    med[c] = torch.from_numpy(np.median(np.array(rk), 0)).float()  # [K, 3]
blind2 = {c: [] for c in range(1, C)}
t0 = time.time()
for i in range(a.frames):
    seed = a.seed0 + i
    fr = ps.render_frame(seed, layout=kind[0], colours=kind[1])
    b = tpd.make_batch([seed], tpd.NUM_POINTS, runner, symmetric=True, frames=[fr])
    with torch.no_grad():
        kp, seg, ctr = model(b["rgb"], b["cloud"], b["choose"], b["geometry"])
    raw = torch.from_numpy(ps.network_inputs(fr, tpd.NUM_POINTS, seed, symmetric_targets=False)["kp_offsets"])[None]
    sym = b["kp_offsets"]
    if not a.sym:
        b["kp_offsets"] = raw
    lab = b["labels"][0]
    segacc.append(float((seg.argmax(1)[0] == lab).float().mean()))
    for c in range(1, C):
        m = lab == c
        if m.sum() == 0:
            continue
        e = (kp[0][:, m] - b["kp_offsets"][0][:, m]).abs().sum(-1).mean(1)
        kperr[c].append(e.numpy())
        symerr[c].append(float((kp[0][:, m] - (raw if a.sym else sym)[0][:, m]).abs().sum(-1).mean()))
        bl2 = (ctr[0][:, m] - med[c][:, None] - b["kp_offsets"][0][:, m]).abs().sum(-1).mean(1)
        blind2[c].append(bl2.numpy())
        bl = (ctr[0][:, m] - b["kp_offsets"][0][:, m]).abs().sum(-1).mean(1)
        blind[c].append(bl.numpy())
        ctrerr[c].append(float((ctr[0][:, m] - b["ctr_offsets"][0][:, m]).abs().sum(-1).mean()))
    gt_logits = torch.nn.functional.one_hot(b["labels"], C).permute(0, 2, 1).float() * 10
    xyz = b["cloud"][..., :3]
    gt = {int(c): p for c, p in zip(fr["classes"], fr["poses"])}
    def run(kpo, ctro, sg):
        with torch.no_grad():
            P, S, _ = pose_ops.pose_from_votes(xyz, kpo, ctro, sg, mk, a.bandwidth)
        return P[0].numpy(), S[0].numpy()
    outs = {"pred": run(kp, ctr, seg)}
    if not a.quick:
        outs["gtkp_predseg"] = run(b["kp_offsets"], b["ctr_offsets"], seg)
        outs["predkp_gtseg"] = run(kp, ctr, gt_logits)
        outs["gtkp_gtseg"] = run(b["kp_offsets"], b["ctr_offsets"], gt_logits)
    for c, g in gt.items():
        P, S = outs["pred"]
        for mname in modes:
            if mname in outs:
                P, S = outs[mname]
                d = metrics.add_s(P[c], g, scene["model_points"][c]) if S[c] == 0 else np.inf
            else:
                P, S = outs["pred"]
                if S[c] != 0:
                    d = np.inf
                else:
                    q = g.copy()
                    if mname == "predR_gtT":
                        q[:, :3] = P[c][:, :3]
                    elif mname == "gtR_predT":
                        q[:, 3] = P[c][:, 3]
                    else:  # the predicted translation, identity rotation
                        q[:, :3] = np.eye(3)
                        q[:, 3] = P[c][:, 3]
                    d = metrics.add_s(q, g, scene["model_points"][c])
            res[mname][c].append(d)
print(f"{a.frames} frames in {time.time()-t0:.0f}s; seg acc {np.mean(segacc):.4f}")
for mname in modes:
    line, tot, ok = [], 0, 0
    for c in range(1, C):
        d = np.array(res[mname][c])
        th = 0.1 * scene["diameters"][c]
        line.append(f"{ps.CLASSES[c]} {100*(d<th).mean():.0f}% ({1000*np.median(d):.1f}mm)")
        ok += (d < th).sum()
        tot += len(d)
    print(f"{mname:14s} ALL {100*ok/tot:.1f}%  " + "  ".join(line))
if not a.quick:
    for c in range(1, C):
        print(f"{ps.CLASSES[c]:9s} kp L1 per keypoint {np.round(np.mean(kperr[c],0),3)} mean {np.mean(kperr[c]):.4f}; "
              f"rotation-blind (ctr as kp) {np.mean(blind[c]):.4f}, (ctr - median R k) {np.mean(blind2[c]):.4f}; "
              f"ctr L1 {np.mean(ctrerr[c]):.4f}; vs the other targets {np.mean(symerr[c]):.4f} "
              f"|kp| {np.round(np.linalg.norm(ps.model_keypoints()[c,:8],axis=1),3)}")
