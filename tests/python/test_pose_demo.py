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
    scene = np.load(DEMO / "scene.npz")
    layout, colours = ps.scene_kind(scene)
    frame = ps.render_frame(seed, layout=layout, colours=colours)
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


def test_tabletop_objects_rest_on_the_table():
    """The tabletop layout: proper rotations, every object's lowest point on the table plane (the
    plane the background pixels show), centres inside the image and 13 cm apart."""
    fx, fy, cx, cy = ps.CAMERA
    h, w = ps.IMAGE_SIZE
    for seed in range(20):
        poses, (depth, _, normal) = ps.place_on_table(np.random.default_rng(seed), (0, 1, 2, 3))
        up = -normal[0, 0]
        corner = np.array([(0 - cx) / fx, (0 - cy) / fy, 1.0]) * depth[0, 0]  # a background pixel's point
        table = corner @ up
        for obj, pose in enumerate(poses):
            r, t = pose[:, :3], pose[:, 3]
            np.testing.assert_allclose(r.T @ r, np.eye(3), atol=1e-9)
            assert abs(np.linalg.det(r) - 1) < 1e-9
            lowest = (ps.object_points(obj)["points"] @ r.T + t) @ up
            assert abs(lowest.min() - table) < 1e-9
            assert 0.15 * w < fx * t[0] / t[2] + cx < 0.85 * w and 0.15 * h < fy * t[1] / t[2] + cy < 0.85 * h
        centres = np.array([p[:, 3] for p in poses])
        gaps = np.linalg.norm(centres[:, None] - centres[None], axis=-1) + np.eye(4)
        assert gaps.min() > 0.13


def test_free_layout_frames_are_unchanged():
    """The free layout still draws the same frames from a seed (the earlier demo's data)."""
    frame = ps.render_frame(7)
    assert frame["poses"].shape == (4, 3, 4)
    np.testing.assert_allclose(frame["poses"][0, :, 3], [0.100684, 0.012206, 0.469538], atol=1e-5)


def test_unknown_layout_or_colours_is_an_error():
    for kwargs in (dict(layout="table"), dict(colours="nocs")):
        with pytest.raises(ValueError, match="render_frame"):
            ps.render_frame(0, **kwargs)
