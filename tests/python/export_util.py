"""Export a function of tensors with pointrt.export and run the file in the runtime (the pose and
detect operator tests)."""
import onnx
import torch

import pointrt
from pointrt import _pointrt


class Wrap(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *a):
        return self.fn(*a)


def export_and_run(tmp_path, fn, args, n_out):
    """(the checked ONNX model, the runtime's outputs in order) of `fn(*args)`."""
    path = tmp_path / "op.onnx"
    names = [f"in{i}" for i in range(len(args))]
    outs = [f"out{i}" for i in range(n_out)]
    pointrt.export(Wrap(fn), tuple(args), str(path), input_names=names, output_names=outs, verify=False, quiet=True)
    model = onnx.load(str(path))
    onnx.checker.check_model(model)
    got = _pointrt.Session(str(path)).run({n: a.numpy() for n, a in zip(names, args)})
    return model, [got[o] for o in outs]


def committed_demo(model: torch.nn.Module, weights, onnx_file):
    """(the model with the committed demo weights, in eval mode; a runtime session of its file)."""
    model.load_state_dict(torch.load(weights))
    model.eval()
    return model, _pointrt.Session(str(onnx_file))
