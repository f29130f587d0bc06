"""The detector decode operators: PyTorch forwards against the runtime on exported files, the
rotated IoU port."""
import numpy as np
import pytest
import torch
from export_util import export_and_run

from pointrt.torch import detect


def head_maps(rng, c=3, h=24, w=20, velocity=True):
    maps = [rng.normal(-4, 2, (1, c, h, w)), rng.uniform(0, 1, (1, 2, h, w)), rng.normal(0, 1, (1, 1, h, w)),
            rng.normal(0.5, 0.3, (1, 3, h, w)), rng.normal(0, 1, (1, 2, h, w))]
    if velocity:
        maps.append(rng.normal(0, 1, (1, 2, h, w)))
    return [torch.from_numpy(m.astype(np.float32)) for m in maps]


@pytest.mark.parametrize("peak,candidates", [(1, "pixel"), (3, "pixel"), (3, "class")])
def test_decode_runtime_matches_torch(tmp_path, peak, candidates):
    maps = head_maps(np.random.default_rng(peak))
    kw = dict(voxel_size=[0.1, 0.1], point_cloud_range=[-10, -12], out_size_factor=4, max_detections=50,
              peak_kernel=peak, candidates=candidates, post_center_range=[-9, -11, -3, 9, 11, 3])
    fn = lambda *m: detect.center_point_decode(*m, **kw)
    _, (boxes, scores, labels, count) = export_and_run(tmp_path, fn, maps, 4)
    wb, ws, wl, wc = fn(*maps)
    assert int(wc[0]) > 5
    np.testing.assert_array_equal(count, wc.numpy())
    np.testing.assert_array_equal(labels, wl.numpy())
    np.testing.assert_allclose(scores, ws.numpy(), rtol=1e-6)
    np.testing.assert_allclose(boxes, wb.numpy(), rtol=1e-5, atol=1e-5)


def test_iou_port_and_nms_runtime_match(tmp_path):
    rng = np.random.default_rng(5)
    k = 60
    boxes = np.zeros((1, k, 7), np.float32)
    boxes[0, :, 0] = rng.integers(0, 4, k) * 6 + rng.uniform(0, 1.5, k)
    boxes[0, :, 1] = rng.uniform(0, 1.5, k)
    boxes[0, :, 3:5] = rng.uniform(1, 4, (k, 2))
    boxes[0, :, 6] = rng.uniform(-3.1, 3.1, k)
    scores = np.round(rng.uniform(0, 1, (1, k)), 1).astype(np.float32)
    labels = rng.integers(0, 2, (1, k))
    args = [torch.from_numpy(boxes), torch.from_numpy(scores), torch.from_numpy(labels),
            torch.tensor([k - 5], dtype=torch.int32)]
    for kw in (dict(), dict(per_class=1), dict(mode="circle", min_radius=2.0)):
        fn = lambda b, s, l, c: detect.box_nms(b, s, l, c, max_output=20, **kw)
        _, got = export_and_run(tmp_path, fn, args, 4)
        want = fn(*args)
        assert int(want[0][0]) > 2
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w.numpy())


def test_bev_iou_simple_cases():
    sq = [0, 0, 0, 2, 2, 1, 0]
    assert detect.bev_iou(sq, sq) == pytest.approx(1.0, abs=1e-5)
    assert detect.bev_iou(sq, [1, 0, 0, 2, 2, 1, 0]) == pytest.approx(1 / 3, abs=1e-5)
    assert detect.bev_iou(sq, [0, 0, 0, 2, 2, 1, np.pi / 2]) == pytest.approx(1.0, abs=1e-4)
    assert detect.bev_iou(sq, [9, 0, 0, 2, 2, 1, 0]) == 0.0
