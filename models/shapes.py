"""Procedural shape set: surface point clouds of spheres, boxes, cylinders, cones and tori with
random proportions, anisotropic scale, noise and pose, centred and scaled to the unit ball.

    from models.shapes import make_dataset, CLASSES
    X, y = make_dataset(num_per_class=100, num_points=512, seed=0)   # X [500, 512, 3] float32

Everything is a function of the seed (numpy's PCG64), so a test set is reproduced from
``(seed, num_per_class, num_points)`` alone.
"""
import numpy as np

CLASSES = ["sphere", "box", "cylinder", "cone", "torus"]


def _sphere(n, rng):
    v = rng.standard_normal((n, 3))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _box(n, rng):
    ext = rng.uniform(0.4, 1.0, size=3)                      # half extents
    areas = np.array([ext[1] * ext[2], ext[0] * ext[2], ext[0] * ext[1]])
    axis = rng.choice(3, size=n, p=areas / areas.sum())
    p = rng.uniform(-1, 1, size=(n, 3)) * ext
    sign = rng.choice([-1.0, 1.0], size=n)
    p[np.arange(n), axis] = sign * ext[axis]
    return p


def _cylinder(n, rng):
    r = rng.uniform(0.3, 0.7)
    h = rng.uniform(0.8, 2.0)
    a_side, a_cap = 2 * np.pi * r * h, np.pi * r * r
    part = rng.choice(3, size=n, p=np.array([a_side, a_cap, a_cap]) / (a_side + 2 * a_cap))
    th = rng.uniform(0, 2 * np.pi, size=n)
    rad = np.where(part == 0, r, r * np.sqrt(rng.uniform(0, 1, size=n)))
    z = np.where(part == 0, rng.uniform(-h / 2, h / 2, size=n),
                 np.where(part == 1, h / 2, -h / 2))
    return np.stack([rad * np.cos(th), rad * np.sin(th), z], axis=1)


def _cone(n, rng):
    r = rng.uniform(0.4, 0.8)
    h = rng.uniform(0.8, 1.8)
    slant = np.hypot(r, h)
    a_side, a_base = np.pi * r * slant, np.pi * r * r
    side = rng.uniform(0, 1, size=n) < a_side / (a_side + a_base)
    th = rng.uniform(0, 2 * np.pi, size=n)
    t = np.sqrt(rng.uniform(0, 1, size=n))                   # uniform on the lateral surface
    rad = np.where(side, r * t, r * np.sqrt(rng.uniform(0, 1, size=n)))
    z = np.where(side, h * (1 - t), 0.0) - h / 3             # apex up, centroid near 0
    return np.stack([rad * np.cos(th), rad * np.sin(th), z], axis=1)


def _torus(n, rng):
    R = 1.0
    r = rng.uniform(0.15, 0.45)
    out = np.empty((0, 3))
    while len(out) < n:                                       # area element ~ (R + r cos v)
        u = rng.uniform(0, 2 * np.pi, size=2 * n)
        v = rng.uniform(0, 2 * np.pi, size=2 * n)
        keep = rng.uniform(0, R + r, size=2 * n) < R + r * np.cos(v)
        u, v = u[keep], v[keep]
        p = np.stack([(R + r * np.cos(v)) * np.cos(u), (R + r * np.cos(v)) * np.sin(u),
                      r * np.sin(v)], axis=1)
        out = np.concatenate([out, p])
    return out[:n]


_MAKERS = [_sphere, _box, _cylinder, _cone, _torus]


def random_rotation(rng):
    """Uniform rotation matrix (QR of a Gaussian matrix, sign-fixed)."""
    q, r = np.linalg.qr(rng.standard_normal((3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def make_shape(label, num_points, rng, noise=0.01, scale_jitter=0.15):
    """One cloud [num_points, 3] float32 of class ``label`` (index into CLASSES)."""
    p = _MAKERS[label](num_points, rng)
    p = p * rng.uniform(1 - scale_jitter, 1 + scale_jitter, size=3)
    p = p @ random_rotation(rng).T
    p = p + rng.normal(0, noise, size=p.shape)
    p = p - p.mean(axis=0)
    p = p / np.max(np.linalg.norm(p, axis=1))
    return p.astype(np.float32)


def make_dataset(num_per_class, num_points, seed, noise=0.01):
    """Shuffled dataset: X [C*num_per_class, num_points, 3] float32, y [..] int64."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for label in range(len(CLASSES)):
        for _ in range(num_per_class):
            X.append(make_shape(label, num_points, rng, noise=noise))
            y.append(label)
    order = rng.permutation(len(y))
    return np.stack(X)[order], np.array(y, np.int64)[order]


if __name__ == "__main__":
    X, y = make_dataset(2, 256, seed=0)
    print(X.shape, y, np.abs(X).max())
