"""The SECOND-style detector of models/ with its decode stage: one file from raw points to boxes.
The head maps must match PyTorch; the boxes must be exactly what the PyTorch decode makes of the
runtime's own head maps (the decode's discrete choices are not stable under 1e-6 changes of
random-weight heatmaps, so comparing boxes with PyTorch's end to end would test noise)."""
import sys
from pathlib import Path

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "models"))
import sparse_detectors as sd  # noqa: E402
from lidar_synth import synth_scan  # noqa: E402

from pointrt import _pointrt  # noqa: E402


class HeadsAndBoxes(nn.Module):
    def __init__(self, det: sd.SparseDetector):
        super().__init__()
        self.det = det

    def forward(self, points):
        det = self.det
        x = det.backbone(det.voxelize(points)).dense()
        n, c, d, h, w = x.shape
        heads = det.head(det.rpn(x.reshape(n, c * d, h, w)))
        return tuple(heads) + tuple(det.decode_heads(heads, score_threshold=0.3))


def test_second_exports_boxes(tmp_path):
    torch.manual_seed(0)
    model = HeadsAndBoxes(sd.randomize_batchnorm(sd.second_kitti(decode=True))).eval()
    scan = synth_scan("kitti", seed=1, boxes=20)
    names = sd.OUTPUT_NAMES + sd.DETECTION_NAMES
    path = tmp_path / "second.onnx"
    torch.onnx.export(model, (torch.from_numpy(scan),), str(path), input_names=["points"], output_names=names,
                      opset_version=13, custom_opsets={"pointrt": 1}, dynamic_axes={"points": {0: "P"}})
    got = _pointrt.Session(str(path)).run({"points": scan})
    with torch.no_grad():
        ref = model(torch.from_numpy(scan))
    for name, r in zip(sd.OUTPUT_NAMES, ref):
        assert np.abs(got[name] - r.numpy()).max() <= 1e-4 * max(np.abs(r.numpy()).max(), 1e-12), name
    heads = tuple(torch.from_numpy(got[n]) for n in sd.OUTPUT_NAMES)
    want = model.det.decode_heads(heads, score_threshold=0.3)
    assert int(want[0][0]) > 0
    for name, w in zip(sd.DETECTION_NAMES, want):
        np.testing.assert_allclose(got[name], w.numpy(), rtol=1e-5, atol=1e-5, err_msg=name)
