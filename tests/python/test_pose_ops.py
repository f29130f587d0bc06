"""The pose operators: PyTorch forwards (the semantics) against the runtime on exported files,
PVN3D's least-squares fit, degenerate input, and the whole pose step recovering known poses."""
import numpy as np
import pytest
import torch
from export_util import export_and_run
from models.shapes import random_rotation

from pointrt.torch import pose


def clustered_votes(rng, b, k, n, c):
    labels = rng.integers(-1, c, size=(b, n))
    centre = 0.2 * (labels[:, None, :, None] + 1) + 0.03 * np.arange(k)[None, :, None, None]
    votes = centre + rng.normal(0, 0.02, size=(b, k, n, 3))
    outlier = rng.random((b, k, n)) < 0.15
    votes[outlier] = rng.uniform(-1, 1, size=(int(outlier.sum()), 3))
    return votes.astype(np.float32), labels


@pytest.mark.parametrize("filter_vote", [-1, 2])
def test_mean_shift_runtime_matches_torch(tmp_path, filter_vote):
    rng = np.random.default_rng(4 + filter_vote)
    votes, labels = clustered_votes(rng, 2, 3, 300, 4)
    args = [torch.from_numpy(votes), torch.from_numpy(labels)]
    fn = lambda v, l: pose.mean_shift(v, l, 4, 0.08, ignore_label=0, filter_vote=filter_vote)
    model, (modes, counts) = export_and_run(tmp_path, fn, args, 2)
    node = [n for n in model.graph.node if n.domain == "pointrt"][0]
    assert node.op_type == "MeanShift"
    want_modes, want_counts = fn(*args)
    np.testing.assert_array_equal(counts, want_counts.numpy())
    np.testing.assert_allclose(modes, want_modes.numpy(), atol=2 * 0.08e-3 + 2e-5)
    assert (want_counts[:, 0] == 0).all()  # the ignored label


def test_instance_reduce_runtime_matches_torch(tmp_path):
    rng = np.random.default_rng(1)
    values = torch.from_numpy(rng.normal(size=(2, 50, 6)).astype(np.float32))
    labels = torch.from_numpy(rng.integers(-1, 4, size=(2, 50)))
    for reduction in ("mean", "sum"):
        fn = lambda v, l: pose.instance_reduce(v, l, 5, reduction)
        _, (red, cnt) = export_and_run(tmp_path, fn, [values, labels], 2)
        want_red, want_cnt = fn(values, labels)
        np.testing.assert_array_equal(cnt, want_cnt.numpy())
        np.testing.assert_allclose(red, want_red.numpy(), rtol=1e-6, atol=1e-6)
        assert cnt[0, 4] == 0 and (red[0, 4] == 0).all()


def pvn3d_best_fit(a, b):
    """The least-squares fit as PVN3D's best_fit_transform states it (SVD, last row of Vt flipped)."""
    ca, cb = a.mean(0), b.mean(0)
    u, s, vt = np.linalg.svd((a - ca).T @ (b - cb))
    r = vt.T @ u.T
    if np.linalg.det(r) < 0:
        vt[2] *= -1
        r = vt.T @ u.T
    return np.concatenate([r, (cb - r @ ca)[:, None]], 1)


def test_rigid_fit_matches_pvn3d_and_runtime(tmp_path):
    rng = np.random.default_rng(2)
    src = rng.uniform(-0.1, 0.1, size=(3, 9, 3)).astype(np.float32)
    tgt = np.stack([[src[c] @ random_rotation(rng).T + rng.uniform(-0.5, 0.5, 3) + rng.normal(0, 0.003, (9, 3))
                     for c in range(3)] for _ in range(2)]).astype(np.float32)
    args = [torch.from_numpy(src), torch.from_numpy(tgt)]
    _, (poses, status) = export_and_run(tmp_path, pose.rigid_fit, args, 2)
    want, want_status = pose.rigid_fit(*args)
    assert (status == 0).all() and (want_status.numpy() == 0).all()
    np.testing.assert_allclose(poses, want.numpy(), atol=1e-5)
    for b in range(2):
        for c in range(3):
            np.testing.assert_allclose(poses[b, c], pvn3d_best_fit(src[c].astype(np.float64), tgt[b, c]), atol=1e-5)


def test_rigid_fit_degenerate_input_flags_never_nan():
    src = torch.tensor([[[0, 0, 0], [1, 1, 1], [2, 2, 2], [3, 3, 3]]], dtype=torch.float32)  # collinear
    tgt = src + 1
    poses, status = pose.rigid_fit(src, tgt)
    assert status.tolist() == [pose.FIT_DEGENERATE]
    assert torch.isfinite(poses).all()
    poses, status = pose.rigid_fit(src[:, :2], tgt[:, :2])
    assert status.tolist() == [pose.FIT_TOO_FEW_POINTS]
    np.testing.assert_allclose(poses[0, :, 3].numpy(), [1, 1, 1])
    tgt[0, 1, 0] = float("nan")
    poses, status = pose.rigid_fit(src, tgt)
    assert status.tolist() == [pose.FIT_NON_FINITE] and torch.isfinite(poses).all()
    with pytest.raises(ValueError, match="weight"):
        pose.rigid_fit(src, tgt, -torch.ones(1, 4))


def test_pose_from_votes_recovers_known_poses(tmp_path):
    """Perfect offsets with noise and outliers: PVN3D's pose step (through the runtime) finds the poses."""
    rng = np.random.default_rng(7)
    classes, k, n = 3, 8, 600
    model_kps = rng.uniform(-0.08, 0.08, size=(classes, k + 1, 3)).astype(np.float32)
    model_kps[:, k] = 0  # the centre
    labels = rng.integers(0, classes, size=n)
    rot = [random_rotation(rng) for _ in range(classes)]
    trans = [rng.uniform(-0.3, 0.3, 3) + [0, 0, 1] for _ in range(classes)]
    points = np.zeros((n, 3))
    cam_kps = np.stack([model_kps[c] @ rot[c].T + trans[c] for c in range(classes)])
    for i in range(n):
        points[i] = trans[labels[i]] + rng.normal(0, 0.04, 3)
    offsets = points[None, :, :] - cam_kps[labels].transpose(1, 0, 2) + rng.normal(0, 0.004, (k + 1, n, 3))
    offsets[:, rng.random(n) < 0.1] += 0.5  # outlier votes
    seg = np.full((classes, n), -5.0)
    seg[labels, np.arange(n)] = 5.0
    args = [torch.from_numpy(a[None].astype(np.float32)) for a in (points, offsets[:k], offsets[k:], seg)]
    args.append(torch.from_numpy(model_kps))
    fn = lambda p, kp, ct, s, m: pose.pose_from_votes(p, kp, ct, s, m, background=-1)[:2]
    _, (poses, status) = export_and_run(tmp_path, fn, args, 2)
    assert status.tolist() == [[0, 0, 0]]
    for c in range(classes):
        np.testing.assert_allclose(poses[0, c, :, :3], rot[c], atol=0.03)
        np.testing.assert_allclose(poses[0, c, :, 3], trans[c], atol=0.005)
