"""The committed detection demo (models/demo_det): the one file (Voxelize .. BoxNMS) answers like
its PyTorch weights on a held-out scan, and the demo's metric (AP at 3D IoU 0.5) is computed."""
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "models"))
import train_det_demo as tdd  # noqa: E402
from models import lidar_synth as ls  # noqa: E402
from export_util import committed_demo  # noqa: E402

DEMO = ROOT / "models" / "demo_det"


@pytest.mark.skipif(not (DEMO / "detector_demo.onnx").exists(), reason="the demo has not been trained")
def test_committed_demo_matches_its_weights():
    from pointrt import metrics
    model, session = committed_demo(tdd.SmallCenterPoint(decode=True), DEMO / "detector_demo.pt",
                                    DEMO / "detector_demo.onnx")
    scan, gt_boxes, gt_labels = ls.synth_labelled_scan(300_000)  # neither a training nor a demo seed
    got = session.run({"points": scan})
    with torch.no_grad():
        ref = dict(zip(tdd.OUTPUT_NAMES, model(torch.from_numpy(scan))))
    n, m = int(got["num_detections"][0]), int(ref["num_detections"][0])
    # Confident detections only: a score near the decode's threshold may fall either side of it.
    keep_got = got["scores"][0, :n] > 0.3
    keep_ref = ref["scores"][0, :m].numpy() > 0.3
    assert keep_got.sum() == keep_ref.sum() >= 1
    np.testing.assert_allclose(got["scores"][0, :n][keep_got], ref["scores"][0, :m].numpy()[keep_ref], atol=1e-3)
    np.testing.assert_array_equal(got["labels"][0, :n][keep_got], ref["labels"][0, :m].numpy()[keep_ref])
    np.testing.assert_allclose(got["boxes"][0, :n][keep_got], ref["boxes"][0, :m].numpy()[keep_ref], atol=2e-3)
    ap = metrics.detection_ap([(got["boxes"][0, :n], got["scores"][0, :n], got["labels"][0, :n], gt_boxes, gt_labels)],
                              range(len(ls.DETECTION_CLASSES)), 0.5, metrics.box_iou_3d)
    present = set(int(c) for c in gt_labels)
    assert all(0.0 <= ap[c] <= 1.0 for c in present)
