"""pointrt.torch.ops forward passes against the naive OPS.md oracle, edge cases included."""
import numpy as np
import pytest
import torch

import oracle
from pointrt.torch import ops


def grid_cloud(rng, B, N, step=0.25, span=4):
    """Points on a coarse grid: exact distance ties, and squared distances on multiples of
    step^2, so radii like 0.55 are never within 1e-5 of a boundary."""
    return (rng.integers(-span, span + 1, size=(B, N, 3)) * step).astype(np.float32)


def rand_cloud(rng, B, N):
    return rng.uniform(-1, 1, size=(B, N, 3)).astype(np.float32)


T = torch.from_numpy


# ------------------------------------------------------------------ FurthestPointSample
@pytest.mark.parametrize("B,N,npoint", [(1, 1, 1), (2, 7, 5), (2, 33, 16), (1, 5, 9)])
@pytest.mark.parametrize("ignore_origin", [0, 1])
def test_fps_random(B, N, npoint, ignore_origin):
    xyz = rand_cloud(np.random.default_rng(N * 10 + npoint), B, N)
    got = ops.furthest_point_sample(T(xyz), npoint, ignore_origin)
    assert got.dtype == torch.int32 and got.shape == (B, npoint)
    np.testing.assert_array_equal(got.numpy(), oracle.fps(xyz, npoint, ignore_origin))


@pytest.mark.parametrize("ignore_origin", [0, 1])
def test_fps_ties_and_duplicates(ignore_origin):
    rng = np.random.default_rng(1)
    xyz = grid_cloud(rng, 2, 40, step=1.0, span=1)   # many duplicates and exact ties
    got = ops.furthest_point_sample(T(xyz), 30, ignore_origin).numpy()
    np.testing.assert_array_equal(got, oracle.fps(xyz, 30, ignore_origin))


def test_fps_npoint_beyond_n_repeats_lowest():
    xyz = np.array([[[0, 0, 0], [1, 0, 0], [0, 2, 0]]], np.float32)
    got = ops.furthest_point_sample(T(xyz), 6).numpy()
    # every point has distance 0 after three picks: the lowest index repeats
    np.testing.assert_array_equal(got, [[0, 2, 1, 0, 0, 0]])
    np.testing.assert_array_equal(got, oracle.fps(xyz, 6))


def test_fps_ignore_origin_rule():
    xyz = np.array([[[0, 0, 0], [0.01, 0, 0], [0.5, 0, 0], [0, 0, 0.02], [-0.4, 0, 0]]],
                   np.float32)
    plain = ops.furthest_point_sample(T(xyz), 5, 0).numpy()
    ign = ops.furthest_point_sample(T(xyz), 5, 1).numpy()
    np.testing.assert_array_equal(plain, oracle.fps(xyz, 5, 0))
    np.testing.assert_array_equal(ign, oracle.fps(xyz, 5, 1))
    # near-origin points (|p|^2 <= 1e-3) are never picked after the first
    assert set(ign[0, 1:]) <= {2, 4}


def test_fps_no_candidate_gives_zero():
    xyz = np.zeros((1, 4, 3), np.float32)
    xyz[0, 1] = [0.01, 0.0, 0.0]
    got = ops.furthest_point_sample(T(xyz), 3, 1).numpy()
    np.testing.assert_array_equal(got, [[0, 0, 0]])
    np.testing.assert_array_equal(got, oracle.fps(xyz, 3, 1))


def test_fps_errors():
    with pytest.raises(ValueError, match="N = 0"):
        ops.furthest_point_sample(torch.zeros(1, 0, 3), 1)
    with pytest.raises(ValueError, match="npoint"):
        ops.furthest_point_sample(torch.zeros(1, 4, 3), 0)
    with pytest.raises(ValueError, match=r"\[B, N, 3\]"):
        ops.furthest_point_sample(torch.zeros(1, 4, 2), 2)


# ------------------------------------------------------------------ BallQuery
@pytest.mark.parametrize("N,M,radius,nsample,min_radius", [
    (30, 7, 0.55, 4, 0.0), (30, 7, 0.8, 16, 0.0), (12, 5, 0.3, 8, 0.0), (25, 6, 0.9, 5, 0.4),
    (4, 3, 2.0, 9, 0.0),  # nsample > N
])
def test_ball_query_grid(N, M, radius, nsample, min_radius):
    rng = np.random.default_rng(N + M)
    xyz = grid_cloud(rng, 2, N, span=2)
    new = np.concatenate([xyz[:, :M - 2], grid_cloud(rng, 2, 2, span=2)], axis=1)
    got = ops.ball_query(T(xyz), T(new), radius, nsample, min_radius)
    assert got.dtype == torch.int32 and got.shape == (2, M, nsample)
    np.testing.assert_array_equal(got.numpy(),
                                  oracle.ball_query(xyz, new, radius, nsample, min_radius))


def test_ball_query_edge_cases():
    xyz = np.array([[[0, 0, 0], [5, 0, 0], [0.1, 0, 0], [0.2, 0, 0], [0.3, 0, 0]]], np.float32)
    new = np.array([[[0, 0, 0], [9, 9, 9], [5, 0, 0]]], np.float32)
    got = ops.ball_query(T(xyz), T(new), 0.25, 3).numpy()
    np.testing.assert_array_equal(got[0, 0], [0, 2, 3])   # first hits in point order
    np.testing.assert_array_equal(got[0, 1], [0, 0, 0])   # no hit: zeros
    np.testing.assert_array_equal(got[0, 2], [1, 1, 1])   # one hit fills every slot
    # d2 == 0 is accepted even inside min_radius
    got = ops.ball_query(T(xyz), T(new), 0.25, 3, 0.15).numpy()
    np.testing.assert_array_equal(got[0, 0], [0, 3, 0])
    np.testing.assert_array_equal(got, oracle.ball_query(xyz, new, 0.25, 3, 0.15))
    # strict upper bound: a point exactly at the radius is rejected
    got = ops.ball_query(T(xyz), T(new[:, :1]), 0.5, 6).numpy()
    exact = np.array([[[0, 0, 0], [0.5, 0, 0]]], np.float32)
    assert ops.ball_query(T(exact), T(exact[:, :1]), 0.5, 2).numpy().tolist() == [[[0, 0]]]


def test_ball_query_random_and_chunked(monkeypatch):
    rng = np.random.default_rng(3)
    xyz = rand_cloud(rng, 2, 64)
    new = rand_cloud(rng, 2, 19)
    ref = oracle.ball_query(xyz, new, 0.5, 8)
    monkeypatch.setattr(ops, "_CHUNK_ELEMS", 200)  # force several chunks over the centres
    np.testing.assert_array_equal(ops.ball_query(T(xyz), T(new), 0.5, 8).numpy(), ref)


def test_ball_query_errors():
    with pytest.raises(ValueError, match="radius"):
        ops.ball_query(torch.zeros(1, 3, 3), torch.zeros(1, 1, 3), 0.0, 2)
    with pytest.raises(ValueError, match="nsample"):
        ops.ball_query(torch.zeros(1, 3, 3), torch.zeros(1, 1, 3), 1.0, 0)
    with pytest.raises(ValueError, match="N = 0"):
        ops.ball_query(torch.zeros(1, 0, 3), torch.zeros(1, 1, 3), 1.0, 2)


# ------------------------------------------------------------------ ThreeNN
@pytest.mark.parametrize("n,m", [(9, 1), (9, 2), (9, 3), (17, 30), (0, 4)])
def test_three_nn(n, m):
    rng = np.random.default_rng(n * 7 + m)
    unknown = grid_cloud(rng, 2, n, span=2)
    known = grid_cloud(rng, 2, m, span=2)     # coarse grid: duplicate known points and ties
    dist, idx = ops.three_nn(T(unknown), T(known))
    assert dist.dtype == torch.float32 and idx.dtype == torch.int32
    rd, ri = oracle.three_nn(unknown, known)
    np.testing.assert_array_equal(idx.numpy(), ri)
    np.testing.assert_array_equal(dist.numpy(), rd)
    if m < 3 and n:
        assert (dist[..., m:] == 1e20).all() and (idx[..., m:] == 0).all()


def test_three_nn_tie_order():
    known = np.array([[[1, 0, 0], [0, 1, 0], [-1, 0, 0], [0, -1, 0], [0, 0, 0]]], np.float32)
    unknown = np.array([[[0, 0, 0], [0, 0, 5]]], np.float32)
    dist, idx = ops.three_nn(T(unknown), T(known))
    np.testing.assert_array_equal(idx.numpy()[0], [[4, 0, 1], [4, 0, 1]])
    np.testing.assert_allclose(dist.numpy()[0, 0], [0, 1, 1])


def test_three_nn_errors():
    with pytest.raises(ValueError, match="N = 0"):
        ops.three_nn(torch.zeros(1, 2, 3), torch.zeros(1, 0, 3))


# ------------------------------------------------------------------ KNN
@pytest.mark.parametrize("N,M,k", [(1, 3, 1), (20, 6, 4), (20, 6, 7), (12, 5, 12)])
def test_knn(N, M, k):
    rng = np.random.default_rng(N + 31 * k)
    xyz = grid_cloud(rng, 2, N, span=2)
    new = grid_cloud(rng, 2, M, span=2)
    idx, dist2 = ops.knn(T(xyz), T(new), k)
    assert idx.dtype == torch.int32 and idx.shape == (2, M, k)
    ri, rd = oracle.k_nearest(xyz, new, k)
    np.testing.assert_array_equal(idx.numpy(), ri)
    np.testing.assert_array_equal(dist2.numpy(), rd)


def test_knn_errors():
    with pytest.raises(ValueError, match="'k'"):
        ops.knn(torch.zeros(1, 3, 3), torch.zeros(1, 1, 3), 4)
    with pytest.raises(ValueError, match="'k'"):
        ops.knn(torch.zeros(1, 3, 3), torch.zeros(1, 1, 3), 0)


# ------------------------------------------------------------------ gathers
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_gather_group_interpolate(dtype):
    rng = np.random.default_rng(5)
    B, C, N, M, S = 2, 3, 11, 6, 4
    f = rng.standard_normal((B, C, N)).astype(np.float32)
    i2 = rng.integers(0, N, size=(B, M))
    i3 = rng.integers(0, N, size=(B, M, S))
    i_nn = rng.integers(0, N, size=(B, M, 3))
    w = rng.uniform(0, 1, size=(B, M, 3)).astype(np.float32)
    np.testing.assert_array_equal(ops.gather_points(T(f), T(i2).to(dtype)).numpy(),
                                  oracle.gather_points(f, i2))
    np.testing.assert_array_equal(ops.group_points(T(f), T(i3).to(dtype)).numpy(),
                                  oracle.group_points(f, i3))
    np.testing.assert_array_equal(ops.three_interpolate(T(f), T(i_nn).to(dtype), T(w)).numpy(),
                                  oracle.three_interpolate(f, i_nn, w))


def test_index_out_of_range_is_an_error():
    f = torch.zeros(1, 2, 5)
    with pytest.raises(ValueError, match=r"GatherPoints.*'idx'.*index 5"):
        ops.gather_points(f, torch.tensor([[0, 5]], dtype=torch.int32))
    with pytest.raises(ValueError, match=r"GroupPoints.*index -1"):
        ops.group_points(f, torch.tensor([[[0, -1]]]))
    with pytest.raises(ValueError, match=r"ThreeInterpolate.*index 7"):
        ops.three_interpolate(f, torch.tensor([[[0, 1, 7]]]), torch.ones(1, 1, 3))
    with pytest.raises(ValueError, match="int32 or int64"):
        ops.gather_points(f, torch.zeros(1, 2))


def test_backward_matches_gradcheck():
    rng = np.random.default_rng(9)
    B, C, N, M, S = 2, 3, 7, 4, 3
    f = torch.tensor(rng.standard_normal((B, C, N)), dtype=torch.float64, requires_grad=True)
    i2 = torch.tensor(rng.integers(0, N, size=(B, M)), dtype=torch.int32)
    i3 = torch.tensor(rng.integers(0, N, size=(B, M, S)), dtype=torch.int32)
    i_nn = torch.tensor(rng.integers(0, N, size=(B, M, 3)), dtype=torch.int32)
    w = torch.tensor(rng.uniform(0, 1, size=(B, M, 3)), dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda x: ops.gather_points(x, i2), (f,))
    assert torch.autograd.gradcheck(lambda x: ops.group_points(x, i3), (f,))
    assert torch.autograd.gradcheck(lambda x: ops.three_interpolate(x, i_nn, w), (f,))


def test_index_outputs_are_not_differentiable():
    xyz = torch.rand(1, 8, 3, requires_grad=True)
    assert not ops.furthest_point_sample(xyz, 3).requires_grad
    assert not ops.ball_query(xyz, xyz, 0.5, 2).requires_grad
    d, i = ops.three_nn(xyz, xyz)
    assert not d.requires_grad and not i.requires_grad
