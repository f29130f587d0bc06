# Generates ONNX node tests for RNN, GRU and LSTM (directions, layouts, sequence lengths with 0
# and full rows, initial states, peepholes, activations with alpha/beta, clip, input_forget,
# linear_before_reset, weights as initializers or fed, float and double) with ONNX Runtime's
# outputs as the expected values, in the layout of ONNX's backend node tests. Cases ORT rejects
# are skipped (and counted). ORT has no layout 1 (batch-first): those cases take ORT's result for
# the same data in layout 0, transposed.
#   python tests/crosscheck/rnn_vs_ort.py /tmp/rnn_vs_ort/node
#   build/pointrt_conformance /tmp/rnn_vs_ort/node
import itertools
import os
import shutil
import sys

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from node_case import one_node_model, write_case  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp/rnn_vs_ort/node"
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)
rng = np.random.default_rng(0)
ort.set_default_logger_severity(3)
written = skipped = 0


def ort_run(model, feeds):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)


def to_layout0(inputs):
    """The same data batch-second: X [N, T, I] -> [T, N, I], states [N, D, H] -> [D, N, H]."""
    return [(nm, a.transpose(1, 0, 2) if a is not None and nm in ("X", "initial_h", "initial_c") else a)
            for nm, a in inputs]


def emit(name, op, opset, inputs, attrs, n_out, initializers=()):
    """inputs: list of (name, array or None) in the operator's input order."""
    global written, skipped
    outs = [["Y", "Y_h", "Y_c"][i] for i in range(n_out)]
    model, in_infos, feeds = one_node_model(name, op, opset, inputs, attrs, outs, initializers)
    try:
        if attrs.get("layout", 0) == 1:
            m0, _, f0 = one_node_model(name, op, opset, to_layout0(inputs), dict(attrs, layout=0), outs, initializers)
            res = [r.transpose(2, 0, 1, 3) if i == 0 else r.transpose(1, 0, 2) for i, r in enumerate(ort_run(m0, f0))]
        else:
            res = ort_run(model, feeds)
    except Exception as e:  # ORT does not serve every attribute set (e.g. LSTM on double)
        print("skip", name, type(e).__name__, str(e).splitlines()[0][:120])
        skipped += 1
        return
    write_case(OUT, name, model, in_infos, feeds, res, outs)
    written += 1


def case(op, T=4, N=3, I=5, H=6, direction="forward", layout=0, bias=True, lens=False, h0=False, c0=False,
         peepholes=False, dtype=np.float32, attrs=None, const=False, opset=14, n_out=None, tag=""):
    D = 2 if direction == "bidirectional" else 1
    G = GATES[op]
    x = rng.uniform(-1, 1, (T, N, I) if layout == 0 else (N, T, I)).astype(dtype)
    w = rng.uniform(-0.7, 0.7, (D, G * H, I)).astype(dtype)
    r = rng.uniform(-0.7, 0.7, (D, G * H, H)).astype(dtype)
    b = rng.uniform(-0.5, 0.5, (D, 2 * G * H)).astype(dtype) if bias else None
    seq = np.array([0, T] + list(rng.integers(0, T + 1, N - 2)), dtype=np.int32)[:N] if lens else None
    state = (D, N, H) if layout == 0 else (N, D, H)
    hi = rng.uniform(-1, 1, state).astype(dtype) if h0 else None
    ci = rng.uniform(-1, 1, state).astype(dtype) if c0 else None
    p = rng.uniform(-0.5, 0.5, (D, 3 * H)).astype(dtype) if peepholes else None
    inputs = [("X", x), ("W", w), ("R", r), ("B", b), ("sequence_lens", seq), ("initial_h", hi)]
    if op == "LSTM":
        inputs += [("initial_c", ci), ("P", p)]
    a = {"hidden_size": H, "direction": direction}
    if opset >= 14:
        a["layout"] = layout
    a.update(attrs or {})
    n_out = n_out or (3 if op == "LSTM" else 2)
    name = (f"{op}_o{opset}_{np.dtype(dtype).name}_{direction}_T{T}N{N}I{I}H{H}_l{layout}"
            f"{'_B' if bias else ''}{'_lens' if lens else ''}{'_h0' if h0 else ''}{'_c0' if c0 else ''}"
            f"{'_P' if peepholes else ''}{'_const' if const else ''}{tag}")
    emit(name, op, opset, inputs, a, n_out, initializers=(1, 2, 3, 7) if const else ())


for op in GATES:
    for direction, layout, variant in itertools.product(["forward", "reverse", "bidirectional"], [0, 1], range(4)):
        case(op, direction=direction, layout=layout, lens=variant >= 2, h0=variant % 2 == 1, c0=variant == 3,
             peepholes=variant >= 1, bias=variant != 2, const=variant == 1)
    for T, N, I, H in [(1, 1, 1, 1), (7, 5, 3, 15), (3, 2, 17, 16), (5, 1, 16, 17), (16, 8, 32, 32)]:
        case(op, T=T, N=N, I=I, H=H, direction="bidirectional", h0=True, c0=True, const=True)
    for dtype in [np.float32, np.float64]:
        case(op, dtype=dtype, direction="bidirectional", lens=True, h0=True, c0=True)
    for opset in [7]:
        case(op, opset=opset, direction="bidirectional", h0=True)
    case(op, attrs={"clip": 0.3}, direction="bidirectional", tag="_clip")
    case(op, n_out=1, tag="_y_only")

acts = {
    "RNN": [["Relu"], ["Sigmoid"], ["LeakyRelu"], ["HardSigmoid"], ["Elu"], ["Softsign"], ["Softplus"], ["Affine"],
            ["ScaledTanh"], ["ThresholdedRelu"]],
    "GRU": [["HardSigmoid", "Elu"], ["Sigmoid", "Relu"], ["Softsign", "Tanh"], ["Affine", "ScaledTanh"]],
    "LSTM": [["HardSigmoid", "Elu", "Softsign"], ["Sigmoid", "Relu", "Tanh"], ["Affine", "ScaledTanh", "Softplus"],
             ["Sigmoid", "Tanh", "LeakyRelu"]],
}
for op, sets in acts.items():
    for names in sets:
        for direction in ["forward", "bidirectional"]:
            full = names * (2 if direction == "bidirectional" else 1)
            alpha = [0.3, 0.6, 0.9, 1.2, 0.4, 0.8][: len(full)]
            beta = [0.2, 0.5, 0.7, 0.1, 0.9, 0.3][: len(full)]
            case(op, direction=direction, h0=True, attrs={"activations": full, "activation_alpha": alpha,
                                                          "activation_beta": beta}, tag="_" + "_".join(names))
case("LSTM", attrs={"input_forget": 1}, peepholes=True, direction="bidirectional", tag="_input_forget")
for direction, lens in itertools.product(["forward", "reverse", "bidirectional"], [False, True]):
    case("GRU", attrs={"linear_before_reset": 1}, direction=direction, lens=lens, h0=True, const=True, tag="_lbr")
print(f"{written} cases written to {OUT}, {skipped} skipped (ONNX Runtime rejects them)")
