"""The pose demo's training path (sampling and neighbour indices computed by the runtime) computes
exactly what the exported PointNet++ operators compute; the committed demo file runs and answers
like its PyTorch weights."""
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "models"))
import train_pose_demo as tpd  # noqa: E402
from models import pose_synth as ps  # noqa: E402
from export_util import committed_demo  # noqa: E402

DEMO = ROOT / "models" / "demo_pose"


def test_precomputed_geometry_matches_the_operators(tmp_path):
    torch.manual_seed(0)
    branch = tpd.PointBranch().eval()
    runner = tpd.GeometryRunner(str(tmp_path), 1, 1024)
    batch = tpd.make_batch([5], 1024, runner)
    with torch.no_grad():
        a = branch(batch["cloud"])
        b = branch(batch["cloud"], batch["geometry"])
    assert torch.equal(a, b)


@pytest.mark.skipif(not (DEMO / "pose_demo.onnx").exists(), reason="the demo has not been trained")
def test_committed_demo_matches_its_weights():
    model, session = committed_demo(tpd.ReducedPVN3D(with_pose=True), DEMO / "pose_demo.pt", DEMO / "pose_demo.onnx")
    seed = 300_000  # neither a training nor a demo seed
    frame = ps.render_frame(seed)
    x = ps.network_inputs(frame, tpd.NUM_POINTS, seed)
    feeds = dict(rgb=x["rgb"][None], cloud=x["cloud"][None], choose=x["choose"][None])
    got = session.run(feeds)
    with torch.no_grad():
        poses, status, labels = model(*(torch.from_numpy(feeds[k]) for k in tpd.INPUT_NAMES))
    assert (got["labels"] == labels.numpy()).mean() > 0.99
    found = (got["pose_status"] == 0) & (status.numpy() == 0)
    assert found[0, 1:].sum() >= 3
    np.testing.assert_allclose(got["poses"][found], poses.numpy()[found], atol=5e-3)
    # the demo's metric: ADD-S of each found object against the frame's ground truth
    from pointrt import metrics
    scene = np.load(DEMO / "scene.npz")
    d = [metrics.add_s(got["poses"][0, c], pose, scene["model_points"][c])
         for c, pose in zip(frame["classes"], frame["poses"]) if got["pose_status"][0, c] == 0]
    assert d and np.isfinite(d).all()
    assert 0.0 <= metrics.pose_auc(d) <= 100.0


def test_canonical_rotation_is_an_equivalent_pose():
    """Symmetric shapes' keypoint targets use one of their indistinguishable poses, the same for
    all of them (idempotent); the bracket keeps its pose."""
    rng = np.random.default_rng(0)
    for obj in range(len(ps.OBJECTS)):
        for _ in range(50):
            r = ps.random_rotation(rng)
            c = ps.canonical_rotation(obj, r)
            np.testing.assert_allclose(c.T @ c, np.eye(3), atol=1e-9)
            assert abs(np.linalg.det(c) - 1) < 1e-9
            np.testing.assert_allclose(ps.canonical_rotation(obj, c), c, atol=1e-9)
            s = r.T @ c  # the symmetry applied, in the model frame
            sym = ps.OBJECTS[obj].symmetry
            if sym == "none":
                np.testing.assert_allclose(c, r)
            elif sym == "box":
                np.testing.assert_allclose(np.abs(s), np.eye(3), atol=1e-9)
            else:  # axial: keeps the z axis up to sign
                assert abs(abs(s[2, 2]) - 1) < 1e-9
