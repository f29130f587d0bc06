"""Synthetic RGB-D frames of procedural objects with known 6D poses and a pinhole camera.

Four objects, each with a smooth colour code over its surface (so the RGB image fixes the pose
even where the shape is symmetric; canonical_rotation gives targets that do not rely on it): a
box, a cylinder, a torus and an L-shaped bracket. A frame
places every object either resting on a textured table seen from above at an angle (layout
"tabletop": a resting orientation turned by any angle about the table's normal) or at any
rotation 0.4-0.7 m in front of the camera over a distant tilted plane (layout "free"), and renders
colour, depth, the instance label and the normal of every pixel by splatting dense surface
samples into a z-buffer (Lambert shading, a random light, noise).

    from models.pose_synth import render_frame, network_inputs, OBJECTS
    frame = render_frame(seed=0, layout="tabletop")  # dict: rgb, depth, label, normal, poses, ...
    inputs = network_inputs(frame, num_points=2048, seed=0)   # PVN3D's rgb / cloud / choose + targets

Everything is a function of the seed (numpy PCG64). Poses are [R | t] with p_cam = R p_model + t.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Tuple

import numpy as np

CLASSES = ["background", "box", "cylinder", "torus", "bracket"]
HELD_OUT_SEED0 = 200_000  # the demo's held-out frames (training uses seeds from 0)
NUM_KEYPOINTS = 8
# 120 x 160 images; fx = fy = 180 px (a 48-degree horizontal field of view).
IMAGE_SIZE = (120, 160)
CAMERA = (180.0, 180.0, 80.0, 60.0)  # fx, fy, cx, cy


def _box_surface(half: np.ndarray, n: int, rng: np.random.Generator) -> Tuple[np.ndarray, np.ndarray]:
    """n points on the surface of an axis-aligned box centred at 0, and their normals."""
    areas = np.array([half[1] * half[2], half[0] * half[2], half[0] * half[1]] * 2)
    face = rng.choice(6, size=n, p=areas / areas.sum())
    axis, sign = face % 3, np.where(face < 3, 1.0, -1.0)
    p = rng.uniform(-1, 1, (n, 3)) * half
    p[np.arange(n), axis] = sign * half[axis]
    normal = np.zeros((n, 3))
    normal[np.arange(n), axis] = sign
    return p, normal


def _cylinder_surface(radius: float, height: float, n: int, rng: np.random.Generator):
    side, cap = 2 * np.pi * radius * height, np.pi * radius ** 2
    part = rng.choice(3, size=n, p=np.array([side, cap, cap]) / (side + 2 * cap))
    th = rng.uniform(0, 2 * np.pi, n)
    rad = np.where(part == 0, radius, radius * np.sqrt(rng.uniform(0, 1, n)))
    z = np.where(part == 0, rng.uniform(-height / 2, height / 2, n), np.where(part == 1, height / 2, -height / 2))
    p = np.stack([rad * np.cos(th), rad * np.sin(th), z], 1)
    normal = np.where((part == 0)[:, None], np.stack([np.cos(th), np.sin(th), 0 * th], 1),
                      np.stack([0 * th, 0 * th, np.where(part == 1, 1.0, -1.0)], 1))
    return p, normal


def _torus_surface(big: float, small: float, n: int, rng: np.random.Generator):
    u = rng.uniform(0, 2 * np.pi, 3 * n)
    v = rng.uniform(0, 2 * np.pi, 3 * n)
    keep = rng.uniform(0, big + small, 3 * n) < big + small * np.cos(v)  # area element
    u, v = u[keep][:n], v[keep][:n]
    normal = np.stack([np.cos(v) * np.cos(u), np.cos(v) * np.sin(u), np.sin(v)], 1)
    centre = np.stack([big * np.cos(u), big * np.sin(u), 0 * u], 1)
    return centre + small * normal, normal


def _bracket_surface(n: int, rng: np.random.Generator):
    """An L of two boxes: 9 x 2 x 3 cm along x and 2 x 6 x 3 cm along y (points inside the
    other box are dropped, so the union's surface remains)."""
    parts = [(np.array([0.045, 0.01, 0.015]), np.array([0.0, 0.0, 0.0])),
             (np.array([0.01, 0.03, 0.015]), np.array([0.035, 0.04, 0.0]))]
    pts, nrm = [], []
    for half, centre in parts:
        p, q = _box_surface(half, n, rng)
        pts.append(p + centre)
        nrm.append(q)
    p, q = np.concatenate(pts), np.concatenate(nrm)
    inside = np.zeros(len(p), bool)
    for half, centre in parts:
        inside |= np.all(np.abs(p - centre) < half - 1e-6, axis=1)
    p, q = p[~inside], q[~inside]
    p = p - np.array([0.02, 0.012, 0.0])  # roughly centred
    pick = rng.permutation(len(p))[:n]
    return p[pick], q[pick]


def _rot(axis: int, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    r = np.eye(3)
    r[i, i], r[i, j], r[j, i], r[j, j] = c, -s, s, c
    return r


# Resting orientations (model frame -> table frame, table z up), before the free turn about z.
_FACE_DOWN = [np.eye(3), _rot(0, np.pi), _rot(0, np.pi / 2), _rot(0, -np.pi / 2), _rot(1, np.pi / 2), _rot(1, -np.pi / 2)]


def _rest_box(rng: np.random.Generator) -> np.ndarray:
    return _FACE_DOWN[rng.integers(6)]


def _rest_cylinder(rng: np.random.Generator) -> np.ndarray:
    """Upright, upside down, or on its side (rolled by any angle about its axis)."""
    k = rng.integers(3)
    return _FACE_DOWN[k] if k < 2 else _rot(0, np.pi / 2) @ _rot(2, rng.uniform(0, 2 * np.pi))


def _rest_flat(rng: np.random.Generator) -> np.ndarray:
    return _FACE_DOWN[rng.integers(2)]


@dataclass
class ObjectModel:
    name: str
    sampler: Callable[[int, np.random.Generator], Tuple[np.ndarray, np.ndarray]]
    phase: Tuple[float, float, float]
    rest: Callable[[np.random.Generator], np.ndarray]  # a resting orientation on a table
    symmetry: str = "none"  # of the shape: "none", "box" (180 degrees about each axis), "axial" (about z, and a flip)


OBJECTS: List[ObjectModel] = [
    ObjectModel("box", lambda n, r: _box_surface(np.array([0.06, 0.04, 0.025]), n, r), (0.0, 2.1, 4.2), _rest_box,
                "box"),
    ObjectModel("cylinder", lambda n, r: _cylinder_surface(0.035, 0.11, n, r), (1.0, 3.0, 5.0), _rest_cylinder,
                "axial"),
    ObjectModel("torus", lambda n, r: _torus_surface(0.045, 0.016, n, r), (2.0, 0.5, 3.5), _rest_flat, "axial"),
    ObjectModel("bracket", _bracket_surface, (4.0, 1.5, 0.3), _rest_flat),
]


COLOUR_CODES = ("waves", "coordinates")


def surface_colour(points: np.ndarray, phase: Tuple[float, float, float], code: str = "waves") -> np.ndarray:
    """A smooth colour code of model-frame positions. "waves": three sinusoids of mixed
    coordinates, a 9 cm period (a different phase per object); "coordinates": each channel grows
    linearly along one model axis over the object's extent (as NOCS maps paint objects)."""
    if code == "coordinates":
        lo, hi = points.min(0), points.max(0)
        return 0.1 + 0.8 * (points - lo) / (hi - lo)
    k = 2 * np.pi / 0.09
    mix = points @ np.array([[1.0, 0.3, -0.5], [-0.4, 1.0, 0.6], [0.7, -0.6, 1.0]]).T
    return 0.5 + 0.42 * np.sin(k * mix + np.asarray(phase))


_CACHE: Dict[Tuple[int, str], Dict[str, np.ndarray]] = {}


def object_points(index: int, colours: str = "waves", n: int = 40000) -> Dict[str, np.ndarray]:
    """Dense surface samples (model frame), their normals and colours, the 8 keypoints (farthest
    point sampling over the surface) and the centre; fixed (seed = the object index)."""
    if (index, colours) not in _CACHE:
        obj = OBJECTS[index]
        rng = np.random.default_rng(1000 + index)
        p, q = obj.sampler(n, rng)
        _CACHE[index, colours] = dict(points=p, normals=q, colours=surface_colour(p, obj.phase, colours),
                                      keypoints=farthest_points(p, NUM_KEYPOINTS), centre=np.zeros(3))
    return _CACHE[index, colours]


def farthest_points(points: np.ndarray, k: int) -> np.ndarray:
    """k surface points by farthest point sampling, starting from the one farthest from the centre."""
    chosen = [int(np.argmax(np.linalg.norm(points, axis=1)))]
    dist = np.linalg.norm(points - points[chosen[0]], axis=1)
    for _ in range(k - 1):
        chosen.append(int(np.argmax(dist)))
        dist = np.minimum(dist, np.linalg.norm(points - points[chosen[-1]], axis=1))
    return points[chosen]


def diameter(index: int) -> float:
    """The object's diameter (largest distance between two surface samples, on a subset)."""
    p = object_points(index)["points"][::20]
    return float(np.sqrt(((p[:, None] - p[None]) ** 2).sum(-1)).max())


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.standard_normal((3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def _place_objects(rng: np.random.Generator, count: int) -> List[np.ndarray]:
    """Random poses [3, 4] in the view frustum, centres at least 13 cm apart."""
    fx, fy, cx, cy = CAMERA
    h, w = IMAGE_SIZE
    poses: List[np.ndarray] = []
    while len(poses) < count:
        z = rng.uniform(0.4, 0.7)
        u, v = rng.uniform(0.2 * w, 0.8 * w), rng.uniform(0.2 * h, 0.8 * h)
        t = np.array([(u - cx) * z / fx, (v - cy) * z / fy, z])
        if all(np.linalg.norm(t - p[:, 3]) > 0.13 for p in poses):
            poses.append(np.concatenate([random_rotation(rng), t[:, None]], 1))
    return poses


def _plane_view(rng: np.random.Generator, normal: np.ndarray, point: np.ndarray):
    """Depth, colour and normal of every pixel of the textured plane through point with normal."""
    fx, fy, cx, cy = CAMERA
    h, w = IMAGE_SIZE
    v, u = np.mgrid[0:h, 0:w].astype(np.float64)
    rays = np.stack([(u - cx) / fx, (v - cy) / fy, np.ones_like(u)], -1)
    depth = (point @ normal) / (rays @ normal)  # z of the hit (rays have z = 1)
    xyz = rays * depth[..., None]
    base = rng.uniform(0.2, 0.8, 3)
    checker = (np.floor(xyz[..., 0] / 0.05) + np.floor(xyz[..., 1] / 0.05)) % 2
    colour = base * (0.75 + 0.25 * checker[..., None]) + rng.normal(0, 0.03, (h, w, 3))
    return depth, np.clip(colour, 0, 1), np.broadcast_to(normal, (h, w, 3)).copy()


def _background(rng: np.random.Generator):
    """A tilted textured plane 0.95-1.2 m away, facing the camera (the "free" layout)."""
    normal = np.array([rng.uniform(-0.3, 0.3), rng.uniform(-0.5, -0.1), -1.0])
    return _plane_view(rng, normal / np.linalg.norm(normal), np.array([0, 0, rng.uniform(0.95, 1.2)]))


def place_on_table(rng: np.random.Generator, objects: Tuple[int, ...]):
    """Objects resting on a table that the camera sees from 0.5-0.7 m at 35-70 degrees above it
    (rolled by up to 10 degrees): each object in one of its resting orientations, turned by any
    angle about the table's normal, centres in the middle 70% of the image and 13 cm apart.
    Returns the poses [3, 4] and the table's (depth, colour, normal) per pixel."""
    fx, fy, cx, cy = CAMERA
    h, w = IMAGE_SIZE
    roll = _rot(2, rng.uniform(-np.pi / 18, np.pi / 18))
    pitch = rng.uniform(np.radians(35), np.radians(70))
    up = roll @ np.array([0.0, -np.cos(pitch), -np.sin(pitch)])
    e1 = roll @ np.array([1.0, 0.0, 0.0])
    table = np.stack([e1, np.cross(up, e1), up], 1)  # table frame -> camera frame
    centre = np.array([0.0, 0.0, rng.uniform(0.5, 0.7)])
    poses: List[np.ndarray] = []
    for obj in objects:
        for _ in range(1000):
            rot = table @ _rot(2, rng.uniform(0, 2 * np.pi)) @ OBJECTS[obj].rest(rng)
            lift = -(object_points(obj)["points"] @ rot.T @ up).min()
            t = centre + table[:, :2] @ rng.uniform(-0.18, 0.18, 2) + lift * up
            u, v = fx * t[0] / t[2] + cx, fy * t[1] / t[2] + cy
            if 0.15 * w < u < 0.85 * w and 0.15 * h < v < 0.85 * h and \
                    all(np.linalg.norm(t - p[:, 3]) > 0.13 for p in poses):
                break
        poses.append(np.concatenate([rot, t[:, None]], 1))
    return poses, _plane_view(rng, -up, centre)


LAYOUTS = ("free", "tabletop")


def render_frame(seed: int, objects: Tuple[int, ...] = (0, 1, 2, 3), layout: str = "free",
                 colours: str = "waves") -> Dict[str, np.ndarray]:
    """One frame: rgb [H, W, 3] float32 in [0, 1], depth [H, W] (m), label [H, W] int (0 =
    background, 1 + object index), normal [H, W, 3] (camera frame), poses [len(objects), 3, 4],
    classes [len(objects)] (labels 1..). layout: "free" (any rotation, in front of a distant plane)
    or "tabletop" (resting on a table); colours: the surface code (surface_colour)."""
    if layout not in LAYOUTS or colours not in COLOUR_CODES:
        raise ValueError(f"render_frame: layout {layout!r} (one of {LAYOUTS}), colours {colours!r} "
                         f"(one of {COLOUR_CODES})")
    rng = np.random.default_rng(seed)
    fx, fy, cx, cy = CAMERA
    h, w = IMAGE_SIZE
    if layout == "free":
        depth, rgb, normal = _background(rng)
    else:
        poses, (depth, rgb, normal) = place_on_table(rng, objects)
    label = np.zeros((h, w), np.int64)
    light = rng.normal(size=3) + np.array([0, 0, -2.0])
    light /= np.linalg.norm(light)
    if layout == "free":  # drawn after the light, as before the layouts: the same frames per seed
        poses = _place_objects(rng, len(objects))
    for obj, pose in zip(objects, poses):
        model = object_points(obj, colours)
        p = model["points"] @ pose[:, :3].T + pose[:, 3]
        n = model["normals"] @ pose[:, :3].T
        facing = (n * p).sum(1) < 0
        p, n, col = p[facing], n[facing], model["colours"][facing]
        u = np.round(fx * p[:, 0] / p[:, 2] + cx).astype(np.int64)
        v = np.round(fy * p[:, 1] / p[:, 2] + cy).astype(np.int64)
        ok = (u >= 0) & (u < w) & (v >= 0) & (v < h)
        u, v, z, n, col = u[ok], v[ok], p[ok, 2], n[ok], col[ok]
        order = np.argsort(-z)  # far first: nearer samples overwrite
        u, v, z, n, col = u[order], v[order], z[order], n[order], col[order]
        nearer = z < depth[v, u]
        u, v, z, n, col = u[nearer], v[nearer], z[nearer], n[nearer], col[nearer]
        shade = 0.5 + 0.5 * np.clip(-(n @ light), 0, 1)
        depth[v, u] = z
        rgb[v, u] = col * shade[:, None]
        normal[v, u] = n
        label[v, u] = obj + 1
    rgb = np.clip(rgb * rng.uniform(0.8, 1.2) + rng.normal(0, 0.02, rgb.shape), 0, 1)
    depth = depth + rng.normal(0, 0.001, depth.shape)
    return dict(rgb=rgb.astype(np.float32), depth=depth.astype(np.float32), label=label,
                normal=normal.astype(np.float32), poses=np.stack(poses).astype(np.float32),
                classes=np.array(objects, np.int64) + 1)


_FLIPS = [np.diag(d).astype(np.float64) for d in ([1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1])]


def canonical_rotation(index: int, rotation: np.ndarray) -> np.ndarray:
    """The rotation among those the object's shape cannot tell apart (rotation @ S, S a symmetry of
    the shape) that is closest to the camera's axes (largest trace): the keypoint targets are then
    a function of what the depth shows (ADD-S, the demo's metric, does not see the difference)."""
    r = np.asarray(rotation, np.float64)
    sym = OBJECTS[index].symmetry
    if sym == "none":
        return r
    if sym == "box":
        cands = [r @ f for f in _FLIPS[:4]]
    else:  # axial: the best angle about z in closed form, with and without the flip about x
        cands = []
        for f in (_FLIPS[0], _FLIPS[1]):
            q = r @ f
            th = np.arctan2(q[0, 1] - q[1, 0], q[0, 0] + q[1, 1])
            c, s = np.cos(th), np.sin(th)
            cands.append(q @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]]))
    return max(cands, key=np.trace)


def network_inputs(frame: Dict[str, np.ndarray], num_points: int, seed: int, symmetric_targets: bool = False
                   ) -> Dict[str, np.ndarray]:
    """PVN3D's inputs and training targets for one frame.

    rgb [3, H, W]; cloud [N, 9] (xyz in metres, the pixel colour, the normal); choose [1, N] int64
    (the flat pixel of each point, ascending); and the targets labels [N], kp_offsets [K, N, 3],
    ctr_offsets [1, N, 3] (point - keypoint, PVN3D's sign), for background points 0. With
    symmetric_targets the keypoints of a symmetric shape are placed with its canonical rotation
    (canonical_rotation; the centre is the same for all its equivalent poses)."""
    rng = np.random.default_rng(seed)
    fx, fy, cx, cy = CAMERA
    h, w = IMAGE_SIZE
    choose = np.sort(rng.choice(h * w, size=num_points, replace=False))
    v, u = choose // w, choose % w
    z = frame["depth"].reshape(-1)[choose]
    xyz = np.stack([(u - cx) * z / fx, (v - cy) * z / fy, z], 1)
    colour = frame["rgb"].reshape(-1, 3)[choose]
    normal = frame["normal"].reshape(-1, 3)[choose] + rng.normal(0, 0.05, (num_points, 3))
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    labels = frame["label"].reshape(-1)[choose]
    kp_off = np.zeros((NUM_KEYPOINTS, num_points, 3))
    ctr_off = np.zeros((1, num_points, 3))
    for cls, pose in zip(frame["classes"], frame["poses"]):
        model = object_points(int(cls) - 1)
        mask = labels == cls
        rot = canonical_rotation(int(cls) - 1, pose[:, :3]) if symmetric_targets else pose[:, :3]
        kps = model["keypoints"] @ rot.T + pose[:, 3]
        kp_off[:, mask] = xyz[None, mask] - kps[:, None]
        ctr_off[0, mask] = xyz[mask] - pose[:, 3]
    return dict(rgb=frame["rgb"].transpose(2, 0, 1).copy(),
                cloud=np.concatenate([xyz, colour, normal], 1).astype(np.float32),
                choose=choose[None].astype(np.int64), labels=labels.astype(np.int64),
                kp_offsets=kp_off.astype(np.float32), ctr_offsets=ctr_off.astype(np.float32))


def scene_kind(desc) -> Tuple[str, str]:
    """(layout, colours) of the frames a scene description (the demo's scene.npz) was made for;
    a description without them: the free layout with waves."""
    keys = getattr(desc, "files", desc)
    return (str(desc["layout"]) if "layout" in keys else "free", str(desc["colours"]) if "colours" in keys else "waves")


def model_keypoints() -> np.ndarray:
    """[C, K + 1, 3] float32: each class's keypoints then its centre (class 0, background: zeros)."""
    out = np.zeros((len(CLASSES), NUM_KEYPOINTS + 1, 3), np.float32)
    for i in range(len(OBJECTS)):
        m = object_points(i)
        out[i + 1, :NUM_KEYPOINTS] = m["keypoints"]
        out[i + 1, NUM_KEYPOINTS] = m["centre"]
    return out


if __name__ == "__main__":
    f = render_frame(0)
    print({k: v.shape for k, v in f.items()}, [round(diameter(i), 3) for i in range(len(OBJECTS))])
