"""End to end: files written by pointrt.export run in the pointrt runtime (pointrt._pointrt) and
agree with PyTorch.  Skipped only when the compiled module is truly absent; a module that is
present but fails to import, or cannot run a file, fails these tests."""
import json
import os

import numpy as np
import pytest
import torch

import pointrt
from pointrt.runtime import runtime_status
from pointrt.torch import ops

_status = runtime_status()
if not _status.present:
    print(f"\n[pointrt tests] skipping runtime tests: {_status.reason}")
pytestmark = pytest.mark.skipif(not _status.present, reason=_status.reason)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO = os.path.join(ROOT, "models", "demo")


@pytest.fixture(scope="module")
def rt():
    assert _status.module is not None, _status.reason
    return _status.module


class Wrap(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *a):
        return self.fn(*a)


def run_both(rt, tmp_path, fn, args, n_out):
    path = str(tmp_path / "m.onnx")
    names_in = [f"in{i}" for i in range(len(args))]
    names_out = [f"out{i}" for i in range(n_out)]
    pointrt.export(Wrap(fn), tuple(args), path, input_names=names_in, output_names=names_out,
                   verify=False, quiet=True)
    sess = rt.Session(path)
    got = sess.run({n: a.numpy() for n, a in zip(names_in, args)})
    ref = fn(*args)
    ref = ref if isinstance(ref, tuple) else (ref,)
    return [np.asarray(got[n]) for n in names_out], [r.numpy() for r in ref]


def grid(seed, B, N):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(-4, 5, (B, N, 3), generator=g) * 0.25).float()


def feats(seed, B, C, N):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(B, C, N, generator=g)


def index(seed, shape, bound, dtype=torch.int32):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, bound, shape, generator=g).to(dtype)


def weights(seed, B, n):
    g = torch.Generator().manual_seed(seed)
    w = torch.rand(B, n, 3, generator=g)
    return w / w.sum(-1, keepdim=True)


# name: (function, inputs); each file holds the one pointrt node (plus nothing else)
CASES = {
    "FurthestPointSample": (lambda x: ops.furthest_point_sample(x, 12), [grid(1, 2, 40)]),
    "FurthestPointSample_ignore_origin": (lambda x: ops.furthest_point_sample(x, 12, 1),
                                          [grid(1, 2, 40)]),
    "FurthestPointSample_npoint_gt_n": (lambda x: ops.furthest_point_sample(x, 50),
                                        [grid(3, 1, 20)]),
    "BallQuery": (lambda x, c: ops.ball_query(x, c, 0.55, 8), [grid(1, 2, 40), grid(2, 2, 9)]),
    "BallQuery_min_radius": (lambda x, c: ops.ball_query(x, c, 0.8, 8, 0.3),
                             [grid(1, 2, 40), grid(2, 2, 9)]),
    "ThreeNN": (lambda u, k: ops.three_nn(u, k), [grid(2, 2, 9), grid(1, 2, 40)]),
    "ThreeNN_m2": (lambda u, k: ops.three_nn(u, k), [grid(2, 2, 9), grid(1, 2, 2)]),
    "KNN": (lambda x, c: ops.knn(x, c, 5), [grid(1, 2, 40), grid(2, 2, 9)]),
    "GatherPoints": (ops.gather_points, [feats(4, 2, 5, 40), index(5, (2, 12), 40)]),
    "GatherPoints_int64": (ops.gather_points,
                           [feats(4, 2, 5, 40), index(5, (2, 12), 40, torch.int64)]),
    "GroupPoints": (ops.group_points, [feats(6, 2, 5, 40), index(7, (2, 9, 4), 40)]),
    "ThreeInterpolate": (ops.three_interpolate,
                         [feats(8, 2, 5, 40), index(9, (2, 9, 3), 40), weights(10, 2, 9)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_op_matches_torch(rt, tmp_path, case):
    fn, args = CASES[case]
    n_out = 2 if case.startswith(("ThreeNN", "KNN")) else 1
    got, ref = run_both(rt, tmp_path, fn, args, n_out)
    for g, r in zip(got, ref):
        assert g.shape == r.shape
        if np.issubdtype(r.dtype, np.integer):
            np.testing.assert_array_equal(g, r)
        else:
            np.testing.assert_allclose(g, r, rtol=1e-6, atol=1e-6)


def test_demo_classifier_matches_expected_logits(rt):
    path = os.path.join(DEMO, "shape_classifier.onnx")
    if not os.path.exists(path):
        pytest.fail("models/demo/shape_classifier.onnx is missing: run models/train_demo.py")
    info = json.load(open(os.path.join(DEMO, "testset.json")))
    expected = np.load(os.path.join(DEMO, "samples", "expected_logits.npy"))
    sess = rt.Session(path)
    for i, name in enumerate(info["samples"]):
        x = np.load(os.path.join(DEMO, "samples", name + ".npy"))
        out = sess.run({"points": x})["logits"]
        np.testing.assert_allclose(out, expected[i:i + 1], rtol=1e-4, atol=1e-4)
