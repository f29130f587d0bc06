"""pointrt.torch.checkpoint.load_checkpoint on every format written here (torch.save zip, legacy
torch, plain pickle of tensors and of numpy arrays), the wrappers training scripts put around the
state dict, the errors; and the Pointnet2_PyTorch shared-MLP layouts of pointrt.torch.pointnet2."""
from __future__ import annotations

import collections
import pickle

import numpy as np
import pytest
import torch

from pointrt.torch.checkpoint import CheckpointError, load_checkpoint
from pointrt.torch.pointnet2 import LAYOUTS, PointnetFPModule, PointnetSAModuleMSG, convert_state_dict


class Pointnet2(torch.nn.Module):
    """A set abstraction (two scales, batch norm) and an FP level without batch norm."""

    def __init__(self):
        super().__init__()
        self.sa = PointnetSAModuleMSG(8, [0.2, 0.4], [4, 8], [[3, 8, 16], [3, 8]], bn=True)
        self.fp = PointnetFPModule([16 + 24, 16], bn=False)


def model_with_random_state(seed: int = 0) -> Pointnet2:
    torch.manual_seed(seed)
    model = Pointnet2()
    with torch.no_grad():
        for t in model.state_dict().values():
            if t.is_floating_point():
                t.copy_(torch.rand_like(t) + 0.5)
    return model


def same_state(a, b) -> bool:
    return list(a) == list(b) and all(torch.equal(a[k], b[k]) for k in a)


def save_torch(path, obj, legacy: bool):
    torch.save(obj, str(path), _use_new_zipfile_serialization=not legacy)


def save_pickle(path, obj, legacy: bool = False):
    with open(path, "wb") as f:
        pickle.dump(obj, f)


@pytest.mark.parametrize("writer,fmt", [(lambda p, o: save_torch(p, o, False), "torch zip"),
                                        (lambda p, o: save_torch(p, o, True), "torch legacy"),
                                        (save_pickle, "pickle")])
@pytest.mark.parametrize("wrap,wrapper,prefix", [
    (lambda s: s, "", ""),
    (lambda s: {"epoch": 3, "it": 10, "best_prec": 0.5, "model_state": s, "optimizer_state": None},
     "model_state", ""),
    (lambda s: {"state_dict": collections.OrderedDict(("module." + k, v) for k, v in s.items())},
     "state_dict", "module."),
    (lambda s: {"model": {"state_dict": s}, "epoch": 1}, "model/state_dict", ""),
    (lambda s: {"net": collections.OrderedDict(("module.module." + k, v) for k, v in s.items())}, "net",
     "module.module."),
])
def test_every_format_and_wrapper_gives_the_state_dict(tmp_path, writer, fmt, wrap, wrapper, prefix):
    state = model_with_random_state().state_dict()
    path = tmp_path / "ckpt.pth"
    writer(path, wrap(state))
    got, info = load_checkpoint(path)
    assert same_state(state, got)
    assert (info.format, info.wrapper, info.stripped_prefix) == (fmt, wrapper, prefix)
    assert fmt in str(info) and not info.trusted


def test_plain_pickle_of_numpy_arrays_becomes_tensors(tmp_path):
    state = {k: v.numpy() for k, v in model_with_random_state().state_dict().items()}
    save_pickle(tmp_path / "np.pkl", {"model_state_dict": state})
    got, info = load_checkpoint(tmp_path / "np.pkl")
    assert info.format == "pickle" and info.wrapper == "model_state_dict"
    assert all(isinstance(v, torch.Tensor) and np.array_equal(v.numpy(), state[k]) for k, v in got.items())
    with pytest.raises(RuntimeError, match="Invalid magic number"):  # what torch.load says about it
        torch.load(tmp_path / "np.pkl", weights_only=False)


class Custom:
    """An object a checkpoint should not carry (its unpickling could run any code)."""


@pytest.mark.parametrize("writer", [lambda p, o: save_torch(p, o, False), lambda p, o: save_torch(p, o, True),
                                    save_pickle])
def test_objects_other_than_tensors_are_refused_unless_trusted(tmp_path, writer):
    path = tmp_path / "obj.pth"
    writer(path, {"state_dict": {"w": torch.ones(2)}, "extra": Custom()})
    with pytest.raises(CheckpointError, match=r"obj.pth: .* holds Python objects other than tensors"):
        load_checkpoint(path)
    state, info = load_checkpoint(path, trusted=True)
    assert info.trusted and torch.equal(state["w"], torch.ones(2)) and info.other_keys == ["extra"]


def test_errors_are_one_line_naming_the_file(tmp_path):
    good = tmp_path / "good.pth"
    torch.save({"w": torch.ones(1000)}, str(good))
    data = good.read_bytes()
    cases = {"missing.pth": None, "empty.pth": b"", "text.pth": b"hello, not weights\n",
             "cut_zip.pth": data[: len(data) // 2]}
    legacy = tmp_path / "legacy.pth"
    save_torch(legacy, {"w": torch.ones(1000)}, True)
    cases["cut_legacy.pth"] = legacy.read_bytes()[:200]
    pickled = pickle.dumps({"w": torch.ones(1000)})
    cases["cut_pickle.pkl"] = pickled[:100]
    expected = {"missing.pth": "no such file", "empty.pth": "not a checkpoint",
                "text.pth": "not a checkpoint (starts with 68 65 6c 6c", "cut_zip.pth": "truncated or damaged torch zip",
                "cut_legacy.pth": "truncated or damaged torch legacy", "cut_pickle.pkl": "truncated or damaged pickle"}
    for name, content in cases.items():
        path = tmp_path / name
        if content is not None:
            path.write_bytes(content)
        with pytest.raises(CheckpointError) as err:
            load_checkpoint(path)
        message = str(err.value)
        assert message.startswith(str(path)) and "\n" not in message and expected[name] in message, message
    torch.save({"epoch": 3, "optimizer": {"lr": 0.1}}, str(tmp_path / "nostate.pth"))
    with pytest.raises(CheckpointError, match="holds a dict with keys .* but no state dict"):
        load_checkpoint(tmp_path / "nostate.pth")


def test_the_three_shared_mlp_layouts_round_trip():
    model = model_with_random_state(1)
    own = model.state_dict()
    assert "sa.mlps.0.layer0.normlayer.bn.running_mean" in own and "fp.mlp.layer0.conv.bias" in own
    names = {"etw": ("sa.mlps.0.layer1.normlayer.bn.weight", "fp.mlp.layer0.conv.bias"),
             "etw_old": ("sa.mlps.0.layer1.bn.bn.weight", "fp.mlp.layer0.conv.bias"),
             "flat": ("sa.mlps.0.4.weight", "fp.mlp.0.bias")}
    for layout in LAYOUTS:
        saved = convert_state_dict(own, model, layout)
        assert all(k in saved for k in names[layout]), (layout, list(saved)[:12])
        assert torch.equal(saved[names[layout][0]], own["sa.mlps.0.layer1.normlayer.bn.weight"])
        fresh = model_with_random_state(2)
        fresh.load_state_dict(saved)  # strict: every key found
        assert same_state(own, fresh.state_dict()), layout
        for other in LAYOUTS:
            assert same_state(convert_state_dict(saved, model, other), convert_state_dict(own, model, other))


def test_flat_layout_is_pointnet2_ops_build_shared_mlp():
    """The flat names are those of an nn.Sequential [Conv2d, BatchNorm2d, ReLU] * L, as
    pointnet2_ops' build_shared_mlp builds it ([Conv2d, ReLU] * L without batch norm)."""
    with_bn = torch.nn.Sequential(torch.nn.Conv2d(6, 8, 1, bias=False), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                                  torch.nn.Conv2d(8, 16, 1, bias=False), torch.nn.BatchNorm2d(16), torch.nn.ReLU())
    without = torch.nn.Sequential(torch.nn.Conv2d(40, 16, 1), torch.nn.ReLU())
    flat = convert_state_dict(model_with_random_state().state_dict(), Pointnet2(), "flat")
    assert [k[len("sa.mlps.0."):] for k in flat if k.startswith("sa.mlps.0.")] == list(with_bn.state_dict())
    assert [k[len("fp.mlp."):] for k in flat if k.startswith("fp.mlp.")] == list(without.state_dict())


def test_a_flat_layout_training_checkpoint_loads_into_the_drop_in_modules(tmp_path):
    """What a pointnet2_ops user has: torch.save({"model_state": flat state dict, ...})."""
    trained = model_with_random_state(3)
    torch.save({"epoch": 7, "best_prec": 0.91, "model_state": convert_state_dict(trained.state_dict(), trained, "flat")},
               str(tmp_path / "ckpt.pth.tar"))
    state, info = load_checkpoint(tmp_path / "ckpt.pth.tar")
    assert info.wrapper == "model_state" and "sa.mlps.0.0.weight" in state
    model = model_with_random_state(4)
    model.load_state_dict(state)
    assert same_state(trained.state_dict(), model.state_dict())
