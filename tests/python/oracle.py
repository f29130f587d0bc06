"""Naive, obviously-right implementations of the OPS.md PointNet++ operators: Python loops over
numpy float32 scalars, every arithmetic step rounded to float32 as OPS.md prescribes."""
import numpy as np

f32 = np.float32


def d2(a, b):
    dx = f32(a[0]) - f32(b[0])
    dy = f32(a[1]) - f32(b[1])
    dz = f32(a[2]) - f32(b[2])
    return f32(f32(f32(dx * dx) + f32(dy * dy)) + f32(dz * dz))


def fps(xyz, npoint, ignore_origin=0):
    """xyz [B, N, 3] -> [B, npoint]."""
    B, N, _ = xyz.shape
    out = np.zeros((B, npoint), np.int64)
    for b in range(B):
        dist = [f32(1e10)] * N
        cand = []
        for k in range(N):
            x, y, z = (f32(v) for v in xyz[b, k])
            mag = f32(f32(f32(x * x) + f32(y * y)) + f32(z * z))
            cand.append(not (ignore_origin and float(mag) <= 1e-3))
        last = 0
        for j in range(1, npoint):
            best, besti = -1.0, 0
            for k in range(N):
                if not cand[k]:
                    continue
                dist[k] = min(dist[k], d2(xyz[b, k], xyz[b, last]))
                if dist[k] > best:
                    best, besti = dist[k], k
            out[b, j] = besti
            last = besti
    return out


def ball_query(xyz, new_xyz, radius, nsample, min_radius=0.0):
    B, N, _ = xyz.shape
    M = new_xyz.shape[1]
    r2 = f32(f32(radius) * f32(radius))
    mr2 = f32(f32(min_radius) * f32(min_radius))
    out = np.zeros((B, M, nsample), np.int64)
    for b in range(B):
        for m in range(M):
            cnt = 0
            for k in range(N):
                d = d2(xyz[b, k], new_xyz[b, m])
                if d == 0 or (d >= mr2 and d < r2):
                    if cnt == 0:
                        out[b, m, :] = k
                    out[b, m, cnt] = k
                    cnt += 1
                    if cnt >= nsample:
                        break
    return out


def k_nearest(points, queries, k):
    """-> idx [B, M, k], d2 [B, M, k]: ascending d2, ties by lower index."""
    B, N, _ = points.shape
    M = queries.shape[1]
    idx = np.zeros((B, M, k), np.int64)
    dd = np.zeros((B, M, k), np.float32)
    for b in range(B):
        for m in range(M):
            lst = sorted((float(d2(queries[b, m], points[b, j])), j) for j in range(N))
            for s in range(min(k, N)):
                dd[b, m, s], idx[b, m, s] = lst[s]
    return idx, dd


def three_nn(unknown, known):
    m = known.shape[1]
    idx, dd = k_nearest(known, unknown, 3)
    dist = np.sqrt(dd.astype(np.float32))
    if m < 3:
        idx[:, :, m:] = 0
        dist[:, :, m:] = 1e20
    return dist, idx


def gather_points(features, idx):
    B, C, N = features.shape
    M = idx.shape[1]
    out = np.zeros((B, C, M), np.float32)
    for b in range(B):
        for c in range(C):
            for m in range(M):
                out[b, c, m] = features[b, c, idx[b, m]]
    return out


def group_points(features, idx):
    B, C, N = features.shape
    _, M, S = idx.shape
    out = np.zeros((B, C, M, S), np.float32)
    for b in range(B):
        for c in range(C):
            for m in range(M):
                for s in range(S):
                    out[b, c, m, s] = features[b, c, idx[b, m, s]]
    return out


def three_interpolate(features, idx, weight):
    B, C, m = features.shape
    n = idx.shape[1]
    out = np.zeros((B, C, n), np.float32)
    for b in range(B):
        for c in range(C):
            for i in range(n):
                acc = f32(0)
                for j in range(3):
                    t = f32(f32(weight[b, i, j]) * f32(features[b, c, idx[b, i, j]]))
                    acc = t if j == 0 else f32(acc + t)
                out[b, c, i] = acc
    return out
