// pybind11 bindings: pointrt._pointrt.Session(path).run({name: ndarray}) -> {name: ndarray}.
// Sequence values are lists of arrays and an empty optional is None, in and out.
// Inputs are passed to the runtime without copies when they are aligned, C-contiguous arrays
// of the right dtype in native byte order; any other layout or byte order is converted first
// (never misread), and values that are no numeric array (None, str, object arrays) are refused
// naming the input. Every error raised here is a pointrt.SessionError (a pointrt.Error).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "io/nonfinite.h"
#include "ops/registry.h"
#include "pointrt/pointrt.h"

namespace py = pybind11;
using namespace pointrt;

namespace {

std::string type_name(const py::handle& h) { return py::str(h.get_type().attr("__name__")).cast<std::string>(); }

// Element types numpy lacks, by their ml_dtypes names. ml_dtypes keeps an int4 in one byte's low
// nibble; pointrt keeps it sign-extended (core/subbyte.h), so int4 arrays are converted both ways.
const char* ml_dtype_name(DType t) {
  switch (t) {
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat8E4M3FN: return "float8_e4m3fn";
    case DType::kFloat8E4M3FNUZ: return "float8_e4m3fnuz";
    case DType::kFloat8E5M2: return "float8_e5m2";
    case DType::kFloat8E5M2FNUZ: return "float8_e5m2fnuz";
    case DType::kInt4: return "int4";
    case DType::kUInt4: return "uint4";
    default: return nullptr;
  }
}

// The ml_dtypes dtype of t, or None when ml_dtypes is not installed.
py::object ml_dtype(DType t) {
  try {
    return py::dtype::from_args(py::module_::import("ml_dtypes").attr(ml_dtype_name(t)));
  } catch (py::error_already_set&) {
    return py::none();
  }
}

DType dtype_from_numpy(const py::dtype& d, const std::string& name) {
  // numpy's own types have numbers below NPY_USERDEF (256); ml_dtypes' are registered above it and
  // are known by name. (`dtype.name` runs Python code in numpy 1.x, an import included: on every
  // feed it was a large part of a small run's cost.)
  constexpr int kNumpyUserTypes = 256;
  if (d.num() >= kNumpyUserTypes) {
    const std::string dname = py::str(d.attr("name")).cast<std::string>();
    for (DType t : {DType::kBFloat16, DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2,
                    DType::kFloat8E5M2FNUZ, DType::kInt4, DType::kUInt4})
      if (dname == ml_dtype_name(t)) return t;
  }
  switch (d.kind()) {
    case 'f':
      if (d.itemsize() == 4) return DType::kFloat32;
      if (d.itemsize() == 8) return DType::kFloat64;
      if (d.itemsize() == 2) return DType::kFloat16;
      break;
    case 'i':
      if (d.itemsize() == 1) return DType::kInt8;
      if (d.itemsize() == 2) return DType::kInt16;
      if (d.itemsize() == 4) return DType::kInt32;
      if (d.itemsize() == 8) return DType::kInt64;
      break;
    case 'u':
      if (d.itemsize() == 1) return DType::kUInt8;
      if (d.itemsize() == 2) return DType::kUInt16;
      if (d.itemsize() == 4) return DType::kUInt32;
      if (d.itemsize() == 8) return DType::kUInt64;
      break;
    case 'b': return DType::kBool;
  }
  throw Error("input '" + name + "' has numpy dtype " + py::str(static_cast<const py::handle&>(d)).cast<std::string>() +
              ", which pointrt cannot run (numeric and bool arrays only)");
}

py::object numpy_dtype_or_none(DType t) {
  switch (t) {
    case DType::kUndefined: return py::none();
    case DType::kBool: return py::dtype::of<bool>();  // of<T>(): no string parsing per output
    case DType::kFloat16: return py::dtype("float16");
    case DType::kFloat32: return py::dtype::of<float>();
    case DType::kFloat64: return py::dtype::of<double>();
    case DType::kInt32: return py::dtype::of<int32_t>();
    case DType::kInt64: return py::dtype::of<int64_t>();
    case DType::kString: return py::dtype("object");
    default: return ml_dtype_name(t) ? ml_dtype(t) : py::dtype(dtype_name(t));
  }
}

// ml_dtypes int4 (low nibble) -> pointrt int4 (sign-extended byte), a new int8 array.
py::array int4_sign_extended(const py::array& a) {
  py::array_t<int8_t> r(std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim()));
  const uint8_t* src = static_cast<const uint8_t*>(a.data());
  int8_t* dst = r.mutable_data();
  for (py::ssize_t i = 0; i < a.size(); ++i)
    dst[i] = static_cast<int8_t>((src[i] & 0x08) ? (src[i] | 0xf0) : (src[i] & 0x0f));
  return std::move(r);
}

py::array to_numpy(const Tensor& t) {
  // The capsule keeps the tensor's storage alive for as long as the array lives.
  auto* holder = new Tensor(t);
  py::capsule owner(holder, [](void* p) { delete static_cast<Tensor*>(p); });
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  py::object dt = numpy_dtype_or_none(t.dtype());
  if (dt.is_none() && ml_dtype_name(t.dtype()))
    throw Error(std::string("cannot return element type ") + dtype_name(t.dtype()) +
                " to numpy: numpy has no such dtype (install ml_dtypes to receive it as an ml_dtypes array)");
  if (dt.is_none() || t.dtype() == DType::kString)
    throw Error(std::string("cannot return element type ") + dtype_name(t.dtype()) + " to numpy");
  if (t.dtype() == DType::kInt4) {  // a copy holding the low nibbles, as ml_dtypes stores int4
    py::array_t<uint8_t> r(shape);
    for (int64_t i = 0; i < t.numel(); ++i) r.mutable_data()[i] = t.data_as<uint8_t>()[i] & 0x0f;
    return r.attr("view")(dt).cast<py::array>();
  }
  return py::array(dt.cast<py::dtype>(), shape, {}, holder->data(), owner);
}

// A feed as an aligned, C-contiguous array in native byte order, or an Error naming the input.
py::array feed_array(const std::string& name, const py::handle& value) {
  if (py::isinstance<py::array>(value)) {  // the common case, without numpy calls from Python
    py::array a = py::reinterpret_borrow<py::array>(value);
    constexpr int kUsable = py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_ | py::detail::npy_api::NPY_ARRAY_ALIGNED_;
    if ((a.flags() & kUsable) == kUsable && a.dtype().attr("isnative").cast<bool>()) {
      dtype_from_numpy(a.dtype(), name);  // refuses object, str, complex, structured, datetime
      return a;
    }
  }
  if (value.is_none()) throw Error("input '" + name + "' is None, expected a numpy array");
  if (py::isinstance<py::str>(value) || py::isinstance<py::bytes>(value))
    throw Error("input '" + name + "' is a " + type_name(value) + ", expected a numpy array");
  py::module_ np = py::module_::import("numpy");
  py::object arr;
  try {
    arr = np.attr("asarray")(value);
  } catch (py::error_already_set& e) {
    throw Error("input '" + name + "' cannot be converted to a numpy array (" + std::string(e.what()) + ")");
  }
  py::dtype dt = arr.attr("dtype").cast<py::dtype>();
  DType t = dtype_from_numpy(dt, name);  // refuses object, str, complex, structured, datetime
  (void)t;
  // Native byte order, aligned and C-contiguous: a '>f4' array is converted, not misread.
  py::object native = dt.attr("newbyteorder")("=");
  return np.attr("require")(arr, native, py::make_tuple("C_CONTIGUOUS", "ALIGNED")).cast<py::array>();
}

py::object shape_list(const ValueInfo& v) {
  if (!v.has_shape) return py::none();
  py::list dims;
  for (const Dim& d : v.shape) {
    if (d.is_fixed())
      dims.append(d.value);
    else if (!d.symbol.empty())
      dims.append(d.symbol);
    else
      dims.append(py::none());
  }
  return std::move(dims);
}

// dtype and shape are the tensor's, or a sequence's elements'; kind is "tensor", "sequence" or
// "optional"; type is ValueInfo::type_string() ("seq(float32)", "optional(float32 [2])").
struct PyValueInfo {
  std::string name;
  py::object dtype, shape;
  std::string kind, type;
};

std::vector<PyValueInfo> value_infos(const std::vector<ValueInfo>& vs) {
  std::vector<PyValueInfo> r;
  for (const auto& v : vs) {
    py::object dt = numpy_dtype_or_none(v.dtype);
    if (dt.is_none() && v.dtype != DType::kUndefined) dt = py::str(dtype_name(v.dtype));  // no ml_dtypes
    r.push_back({v.name, dt, shape_list(v),
                 v.optional   ? "optional"
                 : v.sequence ? "sequence"
                              : "tensor",
                 v.type_string()});
  }
  return r;
}

bool has_non_tensor_io(const Session& s) {
  for (const auto* list : {&s.inputs(), &s.outputs()})
    for (const auto& v : *list)
      if (!v.is_tensor()) return true;
  return false;
}

// A fed array as a borrowed tensor (the array kept alive in `keep`), its non-finite values checked.
Tensor wrap_feed(const std::string& name, const py::handle& value, std::vector<py::array>& keep,
                 NonfinitePolicy policy) {
  py::array a = feed_array(name, value);
  keep.push_back(a);
  Shape s(a.shape(), a.shape() + a.ndim());
  Tensor t = Tensor::wrap(dtype_from_numpy(a.dtype(), name), s, const_cast<void*>(a.data()));
  std::string warning = check_nonfinite(policy, name, "", t);
  if (!warning.empty()) PyErr_WarnEx(PyExc_RuntimeWarning, warning.c_str(), 2);
  return t;
}

// A feed for a sequence or optional input: a list (or tuple) of arrays for a sequence, None for an
// empty optional, an array for a tensor.
AnyValue any_feed(const ValueInfo& v, const py::handle& value, std::vector<py::array>& keep, NonfinitePolicy policy) {
  if (value.is_none()) {
    if (!v.optional) throw Error("input '" + v.name + "' is None, but it is declared " + v.type_string());
    return AnyValue::none();
  }
  if (!v.sequence) return wrap_feed(v.name, value, keep, policy);
  if (!py::isinstance<py::list>(value) && !py::isinstance<py::tuple>(value))
    throw Error("input '" + v.name + "' is declared " + v.type_string() + ": feed a list of arrays, got " +
                type_name(value));
  std::vector<Tensor> items;
  for (auto item : value)
    items.push_back(wrap_feed(v.name + "[" + std::to_string(items.size()) + "]", item, keep, policy));
  // The elements' own type (the session names the input when it is not the declared one).
  const DType t = !items.empty() ? items[0].dtype() : v.dtype != DType::kUndefined ? v.dtype : DType::kFloat32;
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i].dtype() != t)
      throw Error("input '" + v.name + "': element " + std::to_string(i) + " is " + dtype_name(items[i].dtype()) +
                  " but element 0 is " + dtype_name(t) + " (a sequence holds one element type)");
  return Sequence(t, std::move(items));
}

py::object from_any(const AnyValue& v) {
  if (v.is_tensor()) return to_numpy(v.tensor());
  if (v.is_none()) return py::none();
  py::list items;
  for (const Tensor& t : v.sequence().items()) items.append(to_numpy(t));
  return std::move(items);
}

// A str or os.PathLike argument.
std::string path_argument(const char* what, const py::handle& value) {
  py::object p;
  try {
    p = py::module_::import("os").attr("fspath")(value);
  } catch (py::error_already_set&) {
    throw Error(std::string("Session: ") + what + " must be a str or os.PathLike, got " + type_name(value));
  }
  if (!py::isinstance<py::str>(p)) throw Error(std::string("Session: ") + what + " must be a str, not bytes");
  return p.cast<std::string>();
}

// An int argument within [lo, hi] (bool is not an int here).
int64_t int_argument(const char* what, const py::handle& value, int64_t lo, int64_t hi) {
  if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value))
    throw Error(std::string("Session: ") + what + " must be an int, got " + type_name(value));
  int64_t v = 0;
  try {
    v = value.cast<int64_t>();
  } catch (const py::cast_error&) {
    throw Error(std::string("Session: ") + what + " is out of range");
  }
  if (v < lo || v > hi)
    throw Error(std::string("Session: ") + what + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                "], got " + std::to_string(v));
  return v;
}

// A tensor that shares a C-contiguous copy-free view of `obj` and keeps it alive (the GIL is
// taken to release it, from whichever thread drops the last handle).
Tensor tensor_from_numpy(const py::object& obj, const std::string& what) {
  py::array a = py::array::ensure(obj, py::array::c_style);
  if (!a) throw Error(what + " did not return a numpy array");
  const DType t = dtype_from_numpy(a.dtype(), what);
  if (t == DType::kInt4) a = int4_sign_extended(a);
  auto* keep = new py::array(a);
  std::shared_ptr<void> owner(keep, [](void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<py::array*>(p);
  });
  Shape s(a.shape(), a.shape() + a.ndim());
  return Tensor::wrap_shared(t, s, owner, const_cast<void*>(a.data()));
}

class PySession {
 public:
  PySession(const py::object& path, const py::object& threads, bool optimize, const py::object& max_tensor_bytes,
            const py::object& external_data_dirs, const std::vector<std::string>& observe, const py::object& plugins) {
    SessionOptions o;
    o.intra_op_threads = static_cast<int>(int_argument("threads", threads, 0, 1 << 16));
    o.optimize = optimize;
    if (!max_tensor_bytes.is_none())
      o.max_tensor_bytes = static_cast<size_t>(int_argument("max_tensor_bytes", max_tensor_bytes, 1, INT64_MAX));
    o.observe = observe;
    if (py::isinstance<py::str>(plugins) || py::isinstance<py::bytes>(plugins))
      throw Error("Session(plugins=...): give a list of library paths, not one string");
    for (auto lib : plugins) o.plugins.push_back(path_argument("plugins", lib));
    LoadOptions lo;
    for (auto d : external_data_dirs) lo.external_data_dirs.push_back(path_argument("external_data_dirs", d));
    std::string p = path_argument("path", path);
    py::gil_scoped_release release;
    // No Model kept: after prepare only the session's (packed) weights stay in memory.
    session_ = std::make_unique<Session>(Model::load(p, lo), o);
  }
  std::vector<std::string> input_names() const {
    std::vector<std::string> r;
    for (const auto& v : session_->inputs()) r.push_back(v.name);
    return r;
  }
  std::vector<std::string> output_names() const {
    std::vector<std::string> r;
    for (const auto& v : session_->outputs()) r.push_back(v.name);
    return r;
  }
  std::vector<PyValueInfo> inputs() const { return value_infos(session_->inputs()); }
  std::vector<PyValueInfo> outputs() const { return value_infos(session_->outputs()); }

  py::dict run(const py::object& feeds, const std::string& nonfinite, const py::object& on_value) const {
    if (!py::isinstance<py::dict>(feeds))
      throw Error("Session.run: feeds must be a dict {input name: array}, got " + type_name(feeds));
    NonfinitePolicy policy = parse_nonfinite_policy(nonfinite, "Session.run(nonfinite=...)");
    if (has_non_tensor_io(*session_)) return run_any(feeds.cast<py::dict>(), policy, on_value);
    std::map<std::string, Tensor> inputs;
    std::vector<py::array> keep_alive;
    for (auto item : feeds.cast<py::dict>()) {
      if (!py::isinstance<py::str>(item.first))
        throw Error("Session.run: feed keys must be input names (str), got " +
                    py::str(item.first.get_type().attr("__name__")).cast<std::string>());
      std::string name = item.first.cast<std::string>();
      py::array a = feed_array(name, item.second);
      const DType t = dtype_from_numpy(a.dtype(), name);
      if (t == DType::kInt4) a = int4_sign_extended(a);
      keep_alive.push_back(a);
      Shape s(a.shape(), a.shape() + a.ndim());
      inputs[name] = Tensor::wrap(t, s, const_cast<void*>(a.data()));
      std::string warning = check_nonfinite(policy, name, "", inputs[name]);
      if (!warning.empty()) PyErr_WarnEx(PyExc_RuntimeWarning, warning.c_str(), 2);
    }
    RunHooks hooks;
    if (!on_value.is_none())
      hooks.on_value = [&on_value](const std::string& name, const Tensor& t) {
        py::gil_scoped_acquire gil;
        py::array view = to_numpy(t);
        view.attr("flags").attr("writeable") = false;  // the runtime's buffer: read it, never write it
        py::object r = on_value(name, view);
        if (r.is_none()) return Tensor();
        return tensor_from_numpy(r, "on_value('" + name + "')");
      };
    std::vector<Tensor> outs;
    {
      py::gil_scoped_release release;
      outs = session_->run(inputs, hooks);
    }
    py::dict result;
    for (size_t i = 0; i < outs.size(); ++i) result[py::str(session_->outputs()[i].name)] = to_numpy(outs[i]);
    return result;
  }
  std::vector<std::string> plan() const { return session_->execution_plan(); }

 private:
  // Session.run for models with sequence or optional inputs/outputs: lists and None in and out.
  py::dict run_any(const py::dict& feeds, NonfinitePolicy policy, const py::object& on_value) const {
    if (!on_value.is_none())
      throw Error("Session.run: on_value is not supported for models with sequences or optionals");
    std::map<std::string, AnyValue> inputs;
    std::vector<py::array> keep_alive;
    for (auto item : feeds) {
      if (!py::isinstance<py::str>(item.first))
        throw Error("Session.run: feed keys must be input names (str), got " + type_name(item.first));
      const std::string name = item.first.cast<std::string>();
      const ValueInfo* info = nullptr;
      for (const auto& v : session_->inputs())
        if (v.name == name) info = &v;
      if (!info) {
        inputs[name] = Tensor();  // the session names the unknown input
        continue;
      }
      inputs[name] = any_feed(*info, item.second, keep_alive, policy);
    }
    std::vector<AnyValue> outs;
    {
      py::gil_scoped_release release;
      outs = session_->run_any(inputs);
    }
    py::dict result;
    for (size_t i = 0; i < outs.size(); ++i) result[py::str(session_->outputs()[i].name)] = from_any(outs[i]);
    return result;
  }

  std::unique_ptr<Session> session_;
};

// An attribute's value as a Python value (int, float, str or a list of them); None when unset.
py::object attribute_value(const onnx::AttributeProto& a) {
  using A = onnx::AttributeProto;
  switch (a.type()) {
    case A::INT: return py::int_(a.i());
    case A::FLOAT: return py::float_(a.f());
    case A::STRING: return py::str(a.s());
    case A::INTS: return py::cast(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case A::FLOATS: return py::cast(std::vector<float>(a.floats().begin(), a.floats().end()));
    default: return py::none();
  }
}

py::list formal_parameters(const std::vector<onnx::OpSchema::FormalParameter>& params) {
  py::list out;
  for (const auto& p : params) {
    py::dict d;
    d["name"] = p.GetName();
    d["optional"] = p.GetOption() == onnx::OpSchema::Optional;
    d["variadic"] = p.GetOption() == onnx::OpSchema::Variadic;
    out.append(d);
  }
  return out;
}

// The families' ONNX schemas of the custom-domain operators (ops/registry.h): the C++ statement of
// each operator's inputs, outputs and attributes (type, required, default), for the tests that check
// the Python exporters against it (tests/python/test_operator_contracts.py).
py::list operator_schemas() {
  py::list out;
  for (const onnx::OpSchema& s : registry().schemas) {
    py::dict attrs;
    for (const auto& [name, a] : s.attributes()) {
      py::dict d;
      d["type"] = onnx::AttributeProto::AttributeType_Name(a.type);
      d["required"] = a.required;
      d["default"] =
          a.default_value.type() == onnx::AttributeProto::UNDEFINED ? py::none() : attribute_value(a.default_value);
      attrs[py::str(name)] = d;
    }
    py::dict d;
    d["domain"] = s.domain();
    d["name"] = s.Name();
    d["since_version"] = s.since_version();
    d["inputs"] = formal_parameters(s.inputs());
    d["outputs"] = formal_parameters(s.outputs());
    d["attributes"] = attrs;
    out.append(d);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_pointrt, m) {
  m.doc() = "pointrt runtime bindings";
  // pointrt.errors.SessionError derives from pointrt.Error and RuntimeError.
  static py::object error_type = py::module_::import("pointrt.errors").attr("SessionError");
  m.attr("Error") = error_type;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(error_type.ptr(), e.what());
    } catch (const std::bad_alloc&) {
      PyErr_SetString(error_type.ptr(), "out of memory");
    }
  });
  py::class_<PyValueInfo>(m, "ValueInfo",
                          "A model input or output: name, numpy dtype (None if unknown), shape "
                          "(list of int, symbol str or None; None if unknown)")
      .def_readonly("name", &PyValueInfo::name)
      .def_readonly("dtype", &PyValueInfo::dtype)
      .def_readonly("shape", &PyValueInfo::shape)
      .def_readonly("kind", &PyValueInfo::kind)
      .def_readonly("type", &PyValueInfo::type)
      .def("__repr__", [](const PyValueInfo& v) {
        return "ValueInfo(name=" + py::repr(py::str(v.name)).cast<std::string>() +
               ", dtype=" + py::repr(v.dtype).cast<std::string>() + ", shape=" + py::repr(v.shape).cast<std::string>() +
               (v.kind == "tensor" ? std::string() : ", type=" + py::repr(py::str(v.type)).cast<std::string>()) + ")";
      });
  py::class_<PySession>(m, "Session")
      .def(py::init<const py::object&, const py::object&, bool, const py::object&, const py::object&,
                    const std::vector<std::string>&, const py::object&>(),
           py::arg("path"), py::arg("threads") = 0, py::arg("optimize") = true,
           py::arg("max_tensor_bytes") = py::none(), py::arg("external_data_dirs") = py::tuple(),
           py::arg("observe") = std::vector<std::string>{}, py::arg("plugins") = py::tuple(),
           "Load and prepare an ONNX file. threads: intra-op threads (0 = all cores); max_tensor_bytes: largest "
           "tensor a node may allocate (default: half the usable memory); external_data_dirs: more folders "
           "external data may be read from; observe: value names (or \"*\") that run(on_value=...) sees as "
           "nodes compute them; plugins: runtime plugin libraries (include/pointrt/plugin.h) whose operators the "
           "model may use.")
      .def_property_readonly("inputs", &PySession::inputs)
      .def_property_readonly("outputs", &PySession::outputs)
      .def_property_readonly("input_names", &PySession::input_names)
      .def_property_readonly("output_names", &PySession::output_names)
      .def("run", &PySession::run, py::arg("feeds"), py::arg("nonfinite") = "warn", py::arg("on_value") = py::none(),
           "Run with {name: array}; returns {name: ndarray}. Arrays of any layout and byte order are converted; "
           "nonfinite: 'error', 'warn' (a RuntimeWarning) or 'allow' NaN/Inf in float inputs. on_value(name, "
           "ndarray) is called for each observed value as it is computed (a read-only view, valid during the "
           "call); it returns None, or an array of the same dtype and shape that later nodes read instead. "
           "Sequence inputs and outputs are lists of arrays (a tuple is taken too), an empty optional is None "
           "(ValueInfo.kind says 'tensor', 'sequence' or 'optional'; on_value is for tensor models only).")
      .def("execution_plan", &PySession::plan);
  m.def("supported_ops", [] {
    std::vector<std::tuple<std::string, std::string, int, int>> r;
    for (const auto& o : supported_ops()) r.emplace_back(o.domain, o.op_type, o.since_version, o.until_version);
    return r;
  });
  m.def("operator_schemas", &operator_schemas,
        "the pointrt-domain operators' ONNX schemas: [{domain, name, since_version, inputs, outputs, "
        "attributes: {name: {type, required, default}}}] (inputs/outputs: [{name, optional, variadic}])");
  m.def(
      "build_info", [] { return build_info(); }, "versions of pointrt, ONNX, protobuf, oneDNN and the build flags");
  m.attr("__version__") = version();
}
