"""Synthetic spinning-LiDAR scans: a ground plane, yawed boxes (cars, vans, walls), range noise.

Rays are cast from a sensor at the origin on `beams` elevation angles by `azimuths` steps; each
ray hits the nearest of the ground plane and the boxes within `max_range`. This gives the
ring structure, occlusion and density fall-off of a real scan, so voxel counts are realistic
(tens of thousands of non-empty voxels for 30k-250k points).

    python models/lidar_synth.py --preset kitti --out scan.bin      # float32 x, y, z, intensity
    python models/lidar_synth.py --preset nuscenes --out scan.bin   # + ring index (5 floats)
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import List, Tuple

import numpy as np


@dataclass
class ScanPreset:
    beams: int
    azimuths: int
    fov_up_deg: float
    fov_down_deg: float
    max_range: float
    sensor_height: float
    fields: int  # 4: KITTI (x, y, z, intensity); 5: nuScenes (+ ring)
    area: Tuple[float, float, float, float]  # where boxes are placed: xmin, xmax, ymin, ymax


PRESETS = {
    # Velodyne HDL-64E-like, objects in front (KITTI's range is x in [0, 70.4])
    "kitti": ScanPreset(64, 2048, 2.0, -24.8, 80.0, 1.73, 4, (2.0, 68.0, -38.0, 38.0)),
    # HDL-32E-like, all around (nuScenes range is [-54, 54])
    "nuscenes": ScanPreset(32, 1800, 10.0, -30.0, 60.0, 1.84, 5, (-52.0, 52.0, -52.0, 52.0)),
}


def random_boxes(rng: np.random.Generator, count: int, area: Tuple[float, float, float, float],
                 ground_z: float) -> np.ndarray:
    """[count, 7] boxes: cx, cy, cz, length, width, height, yaw."""
    kinds = rng.choice(3, size=count, p=[0.7, 0.2, 0.1])
    dims = np.array([[4.2, 1.8, 1.5], [6.0, 2.3, 2.6], [10.0, 0.4, 2.5]])[kinds]
    dims *= rng.uniform(0.85, 1.15, size=dims.shape)
    cx = rng.uniform(area[0], area[1], count)
    cy = rng.uniform(area[2], area[3], count)
    keep = np.hypot(cx, cy) > 4.0  # not on top of the sensor
    yaw = rng.uniform(-np.pi, np.pi, count)
    cz = ground_z + dims[:, 2] / 2
    return np.stack([cx, cy, cz, dims[:, 0], dims[:, 1], dims[:, 2], yaw], axis=1)[keep]


def _ray_box_distance(origins_dirs: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Nearest positive hit distance of unit rays (from the origin) with yawed boxes; inf if none."""
    dirs = origins_dirs
    best = np.full(dirs.shape[0], np.inf, dtype=np.float64)
    for cx, cy, cz, length, width, height, yaw in boxes:
        c, s = np.cos(-yaw), np.sin(-yaw)
        # Ray origin (0,0,0) and direction in the box frame.
        ox, oy, oz = c * (-cx) - s * (-cy), s * (-cx) + c * (-cy), -cz
        dx = c * dirs[:, 0] - s * dirs[:, 1]
        dy = s * dirs[:, 0] + c * dirs[:, 1]
        dz = dirs[:, 2]
        half = (length / 2, width / 2, height / 2)
        tmin = np.full(dirs.shape[0], -np.inf)
        tmax = np.full(dirs.shape[0], np.inf)
        for o, d, h in ((ox, dx, half[0]), (oy, dy, half[1]), (oz, dz, half[2])):
            with np.errstate(divide="ignore", invalid="ignore"):
                t1 = (-h - o) / d
                t2 = (h - o) / d
            lo, hi = np.minimum(t1, t2), np.maximum(t1, t2)
            parallel = np.abs(d) < 1e-12
            inside_slab = np.abs(o) <= h
            lo = np.where(parallel, np.where(inside_slab, -np.inf, np.inf), lo)
            hi = np.where(parallel, np.where(inside_slab, np.inf, -np.inf), hi)
            tmin, tmax = np.maximum(tmin, lo), np.minimum(tmax, hi)
        hit = (tmax >= tmin) & (tmin > 0)
        best = np.where(hit & (tmin < best), tmin, best)
    return best


def synth_scan(preset: str = "kitti", seed: int = 0, boxes: int = 40, extra_points: int = 0) -> np.ndarray:
    """One scan as float32 [N, fields]."""
    p = PRESETS[preset]
    rng = np.random.default_rng(seed)
    elev = np.deg2rad(np.linspace(p.fov_up_deg, p.fov_down_deg, p.beams))
    azim = np.linspace(-np.pi, np.pi, p.azimuths, endpoint=False)
    ee, aa = np.meshgrid(elev, azim, indexing="ij")
    dirs = np.stack([np.cos(ee) * np.cos(aa), np.cos(ee) * np.sin(aa), np.sin(ee)], axis=-1).reshape(-1, 3)
    ring = np.repeat(np.arange(p.beams), p.azimuths)
    ground_z = -p.sensor_height
    with np.errstate(divide="ignore"):
        t_ground = np.where(dirs[:, 2] < -1e-6, ground_z / dirs[:, 2], np.inf)
    box_arr = random_boxes(rng, boxes, p.area, ground_z)
    t_box = _ray_box_distance(dirs, box_arr)
    t = np.minimum(t_ground, t_box)
    hit = np.isfinite(t) & (t < p.max_range) & (rng.random(t.shape) > 0.05)  # 5% dropouts
    t = t[hit] + rng.normal(0, 0.02, hit.sum())
    pts = dirs[hit] * t[:, None]
    intensity = np.where(t_box[hit] <= t_ground[hit], rng.uniform(0.2, 0.9, hit.sum()), rng.uniform(0.0, 0.3, hit.sum()))
    cols: List[np.ndarray] = [pts[:, 0], pts[:, 1], pts[:, 2], intensity]
    if p.fields == 5:
        cols.append(ring[hit].astype(np.float64))
    scan = np.stack(cols, axis=1).astype(np.float32)
    if extra_points > 0:  # clutter (vegetation-like) to reach high point counts
        n = extra_points
        clutter = np.stack([rng.uniform(p.area[0], p.area[1], n), rng.uniform(p.area[2], p.area[3], n),
                            rng.uniform(ground_z, ground_z + 2.5, n), rng.uniform(0, 0.5, n)] +
                           ([rng.integers(0, p.beams, n).astype(np.float64)] if p.fields == 5 else []), axis=1)
        scan = np.concatenate([scan, clutter.astype(np.float32)])
    return scan


# Labelled scenes for the detection demo: class 0 = car (cars and vans), 1 = pedestrian; walls are
# unlabelled clutter. A separate generator from synth_scan's, whose scans stay as they were.
DETECTION_CLASSES = ["car", "pedestrian"]
DEMO_PRESET = ScanPreset(32, 1024, 2.0, -24.8, 45.0, 1.73, 4, (3.0, 31.0, -15.0, 15.0))


def labelled_boxes(rng: np.random.Generator, cars: int, pedestrians: int, walls: int,
                   area: Tuple[float, float, float, float], ground_z: float) -> Tuple[np.ndarray, np.ndarray]:
    """[n, 7] boxes (cx, cy, cz, length, width, height, yaw) and labels (-1 for walls), not
    overlapping in the bird's-eye view (centres apart by more than the sum of the half lengths)."""
    kinds = [0] * cars + [1] * pedestrians + [2] * walls
    dims_by_kind = {0: [(4.2, 1.8, 1.5), (6.0, 2.3, 2.6)], 1: [(0.6, 0.6, 1.75)], 2: [(6.0, 0.3, 2.0)]}
    boxes, labels = [], []
    for kind in kinds:
        options = dims_by_kind[kind]
        base = np.array(options[int(rng.integers(len(options)))], np.float64)
        dims = base * rng.uniform(0.9, 1.1, 3)
        for _ in range(50):  # rejection sampling of a free spot
            cx, cy = rng.uniform(area[0], area[1]), rng.uniform(area[2], area[3])
            if np.hypot(cx, cy) > 4.0 and all(np.hypot(cx - b[0], cy - b[1]) > (dims[0] + b[3]) / 2 + 0.3 for b in boxes):
                boxes.append([cx, cy, ground_z + dims[2] / 2, dims[0], dims[1], dims[2], rng.uniform(-np.pi, np.pi)])
                labels.append(kind if kind < 2 else -1)
                break
    return np.array(boxes, np.float64).reshape(-1, 7), np.array(labels, np.int64)


def _visible_points(dirs: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """How many rays hit each box first (a box nobody sees is no ground truth)."""
    best = np.full(len(dirs), np.inf)
    owner = np.full(len(dirs), -1)
    for i in range(len(boxes)):
        t = _ray_box_distance(dirs, boxes[i:i + 1])
        closer = t < best
        best[closer], owner[closer] = t[closer], i
    return np.bincount(owner[owner >= 0], minlength=len(boxes)), best


def synth_labelled_scan(seed: int, cars: int = 10, pedestrians: int = 8, walls: int = 2,
                        min_points: int = 5) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A scan [N, 4] (x, y, z, intensity) of DEMO_PRESET with its labelled boxes [G, 7] and labels
    [G]; boxes hit by fewer than `min_points` rays are left out of the ground truth."""
    p = DEMO_PRESET
    rng = np.random.default_rng(10_000 + seed)
    elev = np.deg2rad(np.linspace(p.fov_up_deg, p.fov_down_deg, p.beams))
    azim = np.linspace(-np.pi / 2, np.pi / 2, p.azimuths, endpoint=False)  # the front half
    ee, aa = np.meshgrid(elev, azim, indexing="ij")
    dirs = np.stack([np.cos(ee) * np.cos(aa), np.cos(ee) * np.sin(aa), np.sin(ee)], axis=-1).reshape(-1, 3)
    ground_z = -p.sensor_height
    with np.errstate(divide="ignore"):
        t_ground = np.where(dirs[:, 2] < -1e-6, ground_z / dirs[:, 2], np.inf)
    boxes, labels = labelled_boxes(rng, cars, pedestrians, walls, p.area, ground_z)
    hits, t_box = _visible_points(dirs, boxes)
    t = np.minimum(t_ground, t_box)
    keep = np.isfinite(t) & (t < p.max_range) & (rng.random(t.shape) > 0.05)
    t_kept = t[keep] + rng.normal(0, 0.02, keep.sum())
    pts = dirs[keep] * t_kept[:, None]
    on_box = t_box[keep] <= t_ground[keep]
    intensity = np.where(on_box, rng.uniform(0.2, 0.9, keep.sum()), rng.uniform(0.0, 0.3, keep.sum()))
    scan = np.concatenate([pts, intensity[:, None]], 1).astype(np.float32)
    seen = (labels >= 0) & (hits >= min_points)
    return scan, boxes[seen].astype(np.float32), labels[seen]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), default="kitti")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--boxes", type=int, default=40)
    ap.add_argument("--extra-points", type=int, default=0, help="add clutter points (for large scans)")
    ap.add_argument("--out", required=True, help=".bin (raw float32) or .npy")
    args = ap.parse_args()
    scan = synth_scan(args.preset, args.seed, args.boxes, args.extra_points)
    if args.out.endswith(".npy"):
        np.save(args.out, scan)
    else:
        scan.tofile(args.out)
    print(f"{args.out}: {scan.shape[0]} points x {scan.shape[1]} floats")


if __name__ == "__main__":
    main()
