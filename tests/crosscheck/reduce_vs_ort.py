# Generates ONNX node tests for the reduce family (every opset form, dtypes, attributes, larger
# shapes that take the parallel and pre-packed paths) with ONNX Runtime's outputs as the
# expected values, in the layout of ONNX's backend node tests. Cases ORT rejects are skipped.
#   python tests/crosscheck/reduce_vs_ort.py /tmp/reduce_vs_ort/node
#   build/pointrt_conformance /tmp/reduce_vs_ort/node
import os, shutil, itertools, sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
from onnx.reference import ReferenceEvaluator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from node_case import one_node_model, write_case  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp/reduce_vs_ort/node"


shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)
rng = np.random.default_rng(0)
count = 0

def rand(shape, dt):
    if dt in (np.float32, np.float64):
        return rng.uniform(-2, 2, size=shape).astype(dt)
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt in (np.uint8, np.uint32, np.uint64):
        return rng.integers(0, 5, size=shape).astype(dt)
    return rng.integers(-4, 5, size=shape).astype(dt)

def emit(name, op, opset, inputs, attrs, n_out=1, const_inputs=()):
    """inputs: list of (name, array or None)."""
    global count
    outs = [f"y{i}" for i in range(n_out)]
    model, in_infos, feeds = one_node_model(name, op, opset, inputs, attrs, outs, const_inputs)
    try:
        import onnxruntime as ort
        so = ort.SessionOptions(); so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        res = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)
    except Exception as e:
        print("skip", name, type(e).__name__, str(e)[:100])
        return
    write_case(OUT, name, model, in_infos, feeds, res, outs)
    count += 1

reduces = ["ReduceSum", "ReduceSumSquare", "ReduceMean", "ReduceL1", "ReduceL2", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceLogSum", "ReduceLogSumExp"]
for op in reduces:
    for opset in [1, 7, 11, 13, 18, 20]:
        if op not in ("ReduceMax", "ReduceMin") and opset == 20: continue
        axes_input = opset >= (13 if op == "ReduceSum" else 18)
        dts = [np.float32, np.float64, np.int32, np.int64]
        if op in ("ReduceMax", "ReduceMin") and opset >= 12: dts += [np.int8, np.uint8]
        if op in ("ReduceMax", "ReduceMin") and opset >= 20: dts += [np.bool_]
        if op in ("ReduceLogSum", "ReduceLogSumExp"): dts = [np.float32, np.float64]
        for dt in dts:
            for shape, axes in [((2, 3, 4), [1]), ((2, 3, 4), [0, 2]), ((3, 1, 5, 2), None), ((4, 5), [-1] if opset >= 11 else [1]), ((2, 0, 3), [1]), ((5,), [])]:
                for keep in [0, 1]:
                    x = rand(shape, dt)
                    if op == "ReduceLogSum": x = np.abs(x) + 0.1
                    if op == "ReduceProd" and np.issubdtype(dt, np.integer): x = np.clip(x, -2, 2)  # no overflow
                    attrs = {"keepdims": keep}
                    inputs = [("x", x)]
                    if axes_input:
                        if axes is not None: inputs.append(("axes", np.array(axes, dtype=np.int64)))
                    elif axes:
                        attrs["axes"] = axes
                    if axes == [] and not axes_input: continue
                    emit(f"{op}_o{opset}_{np.dtype(dt).name}_{'x'.join(map(str, shape))}_{'all' if axes is None else '_'.join(map(str, axes)) or 'empty'}_k{keep}", op, opset, inputs, attrs)
            if axes_input:
                x = rand((3, 4), dt)
                emit(f"{op}_o{opset}_{np.dtype(dt).name}_noop", op, opset, [("x", x), ("axes", np.array([], dtype=np.int64))], {"noop_with_empty_axes": 1})

for op in ["ArgMax", "ArgMin"]:
    for opset in [7, 11, 12, 13]:
        for dt in [np.float32, np.int32, np.uint8, np.float64]:
            for shape, axis in [((3, 4), 0), ((3, 4), 1), ((2, 3, 4), -1 if opset >= 11 else 2), ((5,), 0)]:
                for keep in [0, 1]:
                    for last in ([0, 1] if opset >= 12 else [0]):
                        x = rand(shape, dt) if dt != np.float32 else np.round(rand(shape, dt))
                        attrs = {"axis": axis, "keepdims": keep}
                        if opset >= 12: attrs["select_last_index"] = last
                        emit(f"{op}_o{opset}_{np.dtype(dt).name}_{'x'.join(map(str, shape))}_a{axis}_k{keep}_l{last}", op, opset, [("x", x)], attrs)

for op in ["Softmax", "LogSoftmax"]:
    for opset in [7, 11, 13]:
        for dt in [np.float32, np.float64]:
            for shape in [(2, 3, 4), (3, 5), (2, 3, 1, 5)]:
                for axis in list(range(-len(shape) if opset >= 11 else 0, len(shape))) + [None]:
                    attrs = {} if axis is None else {"axis": axis}
                    emit(f"{op}_o{opset}_{np.dtype(dt).name}_{'x'.join(map(str, shape))}_a{axis}", op, opset, [("x", rand(shape, dt) * 3)], attrs)

for opset in [11, 14]:
    for dt in [np.float32, np.float64, np.int32, np.int64]:
        for shape, axis in [((5,), 0), ((3, 4), 1), ((2, 3, 4), -2)]:
            for adt in [np.int32, np.int64]:
                for ex, rev in itertools.product([0, 1], [0, 1]):
                    emit(f"CumSum_o{opset}_{np.dtype(dt).name}_{'x'.join(map(str, shape))}_a{axis}_{np.dtype(adt).name}_e{ex}_r{rev}", "CumSum", opset,
                         [("x", rand(shape, dt)), ("axis", np.array(axis, dtype=adt))], {"exclusive": ex, "reverse": rev})

for opset in [7, 10, 11]:
    for dt in ([np.float32, np.float64] if opset < 11 else [np.float32, np.int32, np.int64, np.uint8, np.float64]):
        for shape, axis, k in [((3, 5), -1, 2), ((3, 5), 0, 3), ((2, 4, 3), 1, 4), ((6,), 0, 6), ((6,), 0, 0)]:
            for largest in ([1] if opset < 11 else [0, 1]):
                x = rand(shape, dt)
                attrs = {"axis": axis}
                if opset < 10:
                    attrs["k"] = k
                    inputs = [("x", x)]
                else:
                    inputs = [("x", x), ("k", np.array([k], dtype=np.int64))]
                if opset >= 11: attrs["largest"] = largest
                emit(f"TopK_o{opset}_{np.dtype(dt).name}_{'x'.join(map(str, shape))}_a{axis}_k{k}_l{largest}", "TopK", opset, inputs, attrs, n_out=2)

for opset in [7, 9, 11, 13]:
    for dt in ([np.float32, np.float64] if opset < 9 else [np.float32, np.int32, np.int64, np.float64]):
        for ta, tb in itertools.product([0, 1], [0, 1]):
            for cshape in [None, (), (4,), (3, 1), (3, 4), (1, 4)]:
                if cshape is None and opset < 11: continue
                a = rand((5, 3) if ta else (3, 5), dt); b = rand((4, 5) if tb else (5, 4), dt)
                inputs = [("a", a), ("b", b)] + ([("c", rand(cshape, dt))] if cshape is not None else [])
                alpha, beta = (2.0, 3.0) if dt in (np.int32, np.int64) else (0.5, -1.25)
                for const in [(), (1,)]:
                    emit(f"Gemm_o{opset}_{np.dtype(dt).name}_t{ta}{tb}_c{'x'.join(map(str, cshape)) if cshape is not None else 'none'}_const{len(const)}", "Gemm", opset, inputs,
                         {"transA": ta, "transB": tb, "alpha": alpha, "beta": beta}, const_inputs=const)

for opset in [7, 9, 13]:
    for dt in ([np.float32, np.float64] if opset < 9 else [np.float32, np.int32, np.int64]):
        for sa, sb in [((3,), (3,)), ((4,), (4, 5)), ((2, 3, 4), (4,)), ((2, 3, 4), (4, 5)), ((1, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (3, 4, 2)), ((0, 3), (3, 2))]:
            for const in [(), (1,)]:
                emit(f"MatMul_o{opset}_{np.dtype(dt).name}_{'x'.join(map(str, sa))}_{'x'.join(map(str, sb))}_const{len(const)}", "MatMul", opset,
                     [("a", rand(sa, dt)), ("b", rand(sb, dt))], {}, const_inputs=const)

for eq, shapes in [("ij,jk->ik", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ii->i", [(4, 4)]), ("ij->", [(3, 4)]),
                   ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]), ("ij,ij->i", [(3, 4), (3, 4)]), ("i,j->ij", [(3,), (4,)]),
                   ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]), ("ijk,ikl,ilm->im", [(2, 3, 4), (2, 4, 5), (2, 5, 3)]), ("ba", [(3, 4)]),
                   ("...ii->...i", [(2, 3, 3)])]:
    for dt in [np.float32, np.float64, np.int64, np.int32]:
        emit(f"Einsum_{eq.replace('->', '_to_').replace(',', '_').replace('...', 'E')}_{np.dtype(dt).name}", "Einsum", 12,
             [(f"x{i}", rand(s, dt)) for i, s in enumerate(shapes)], {"equation": eq})

for dt in [np.float32, np.float64]:
    for shape in [(2, 3, 4), (3, 5), (2, 3, 2, 3)]:
        for axis in range(-len(shape), len(shape)):
            norm = shape[axis if axis >= 0 else axis + len(shape):]
            for bias in [True, False]:
                inputs = [("x", rand(shape, dt)), ("s", rand(norm, dt))] + ([("b", rand(norm, dt))] if bias else [])
                emit(f"LayerNormalization_{np.dtype(dt).name}_{'x'.join(map(str, shape))}_a{axis}_b{int(bias)}", "LayerNormalization", 17, inputs, {"axis": axis, "epsilon": 1e-3}, n_out=3)
for opset in [7, 21]:
    for dt in [np.float32, np.float64]:
        for shape in [(2, 3, 4), (1, 2, 3, 5), (2, 4, 1)]:
            emit(f"InstanceNormalization_o{opset}_{np.dtype(dt).name}_{'x'.join(map(str, shape))}", "InstanceNormalization", opset,
                 [("x", rand(shape, dt)), ("s", rand((shape[1],), dt)), ("b", rand((shape[1],), dt))], {"epsilon": 1e-2})

# Larger shapes: parallel paths, packed oneDNN weights.
for sa, sb in [((2, 64, 128), (128, 96)), ((100, 257), (257, 33)), ((7, 1, 40, 64), (64, 17)), ((64,), (64, 50))]:
    for const in [(), (1,)]:
        emit(f"MatMulBig_{'x'.join(map(str, sa))}_{'x'.join(map(str, sb))}_const{len(const)}", "MatMul", 13,
             [("a", rand(sa, np.float32)), ("b", rand(sb, np.float32))], {}, const_inputs=const)
for ta, tb in itertools.product([0, 1], [0, 1]):
    for cshape in [None, (96,), (70, 96), (70, 1)]:
        for alpha in [1.0, 0.5]:
            a = rand((128, 70) if ta else (70, 128), np.float32); b = rand((96, 128) if tb else (128, 96), np.float32)
            inputs = [("a", a), ("b", b)] + ([("c", rand(cshape, np.float32))] if cshape is not None else [])
            for const in [(), (1,), (1, 2)]:
                emit(f"GemmBig_t{ta}{tb}_c{'x'.join(map(str, cshape)) if cshape else 'none'}_al{alpha}_const{len(const)}", "Gemm", 13, inputs,
                     {"transA": ta, "transB": tb, "alpha": alpha, "beta": 0.75}, const_inputs=const)
for op in ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceL2", "ReduceProd", "ReduceLogSumExp"]:
    for shape, axes in [((300, 257), [0]), ((300, 257), [1]), ((4, 300, 65), [0, 2]), ((2, 3, 5000), [1]), ((70000,), [0]), ((3, 40000), [0])]:
        x = rand(shape, np.float32)
        if op == "ReduceProd": x = (1 + x * 0.001).astype(np.float32)
        emit(f"{op}Big_{'x'.join(map(str, shape))}_{'_'.join(map(str, axes))}", op, 18, [("x", x), ("axes", np.array(axes, dtype=np.int64))], {"keepdims": 0})
for op in ["Softmax", "LogSoftmax"]:
    for shape, axis in [((64, 1000), -1), ((8, 300, 40), 1), ((4, 5, 3000), -1), ((2, 17, 33), 0)]:
        x = rand(shape, np.float32) * 10
        x.flat[::7] = -np.inf if op == "Softmax" else x.flat[::7]
        emit(f"{op}Big_{'x'.join(map(str, shape))}_a{axis}", op, 13, [("x", x)], {"axis": axis})
for shape, axis in [((64, 1000), -1), ((40, 300, 40), 1)]:
    for op in ["ArgMax", "ArgMin"]:
        emit(f"{op}Big_{'x'.join(map(str, shape))}_a{axis}", op, 13, [("x", rand(shape, np.float32))], {"axis": axis})
    emit(f"CumSumBig_{'x'.join(map(str, shape))}_a{axis}", "CumSum", 14, [("x", rand(shape, np.float32)), ("axis", np.array(axis, dtype=np.int64))], {})
    for k in [1, 5, 40]:
        emit(f"TopKBig_{'x'.join(map(str, shape))}_a{axis}_k{k}", "TopK", 11, [("x", np.round(rand(shape, np.float32) * 4)), ("k", np.array([k], dtype=np.int64))], {"axis": axis}, n_out=2)
for eq, shapes in [("bij,bjk->bik", [(8, 64, 32), (8, 32, 48)]), ("bhqd,bhkd->bhqk", [(2, 4, 33, 16), (2, 4, 40, 16)]),
                   ("bhqk,bhkd->bhqd", [(2, 4, 33, 40), (2, 4, 40, 16)]), ("ij,jk", [(50, 60), (60, 70)]), ("...d,dk->...k", [(3, 5, 64), (64, 10)]),
                   ("bi,bi->b", [(100, 64), (100, 64)]), ("abcd->dcba", [(3, 4, 5, 6)]), ("aab->ab", [(5, 5, 7)]), ("ij,jk,kl->il", [(5, 6), (6, 7), (7, 3)]),
                   ("b...,b...->b", [(3, 4, 5), (3, 1, 5)]), ("i,i->", [(1000,), (1000,)]), ("ij->j", [(300, 7)])]:
    for dt in [np.float32, np.float64]:
        emit(f"EinsumX_{eq.replace('->', '_to_').replace(',', '_').replace('...', 'E')}_{np.dtype(dt).name}", "Einsum", 12,
             [(f"x{i}", rand(s, dt)) for i, s in enumerate(shapes)], {"equation": eq})
for shape, axis in [((64, 768), -1), ((4, 50, 768), -1), ((4, 50, 16, 16), 2)]:
    norm = shape[axis:] if axis >= 0 else shape[axis:]
    emit(f"LayerNormBig_{'x'.join(map(str, shape))}_a{axis}", "LayerNormalization", 17, [("x", rand(shape, np.float32) * 5 + 3), ("s", rand(norm, np.float32)), ("b", rand(norm, np.float32))], {"axis": axis}, n_out=3)
emit("InstanceNormBig", "InstanceNormalization", 13, [("x", rand((2, 16, 40, 40), np.float32) * 4 + 1), ("s", rand((16,), np.float32)), ("b", rand((16,), np.float32))], {})
print("generated", count)
