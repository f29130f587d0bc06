// pybind11 bindings: pointrt._pointrt.Session(path).run({name: ndarray}) -> {name: ndarray}.
// Inputs are passed to the runtime without copies when they are C-contiguous arrays of the
// right dtype; outputs are returned as new numpy arrays that own a reference to the result.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "pointrt/pointrt.h"

namespace py = pybind11;
using namespace pointrt;

namespace {

DType dtype_from_numpy(const py::dtype& d) {
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
  throw Error("numpy dtype " + py::cast<std::string>(py::str(static_cast<const py::handle&>(d))) + " is not supported");
}

py::dtype numpy_dtype(DType t) {
  switch (t) {
    case DType::kFloat32: return py::dtype("float32");
    case DType::kFloat64: return py::dtype("float64");
    case DType::kFloat16: return py::dtype("float16");
    case DType::kInt8: return py::dtype("int8");
    case DType::kInt16: return py::dtype("int16");
    case DType::kInt32: return py::dtype("int32");
    case DType::kInt64: return py::dtype("int64");
    case DType::kUInt8: return py::dtype("uint8");
    case DType::kUInt16: return py::dtype("uint16");
    case DType::kUInt32: return py::dtype("uint32");
    case DType::kUInt64: return py::dtype("uint64");
    case DType::kBool: return py::dtype("bool");
    default: throw Error(std::string("cannot return element type ") + dtype_name(t) + " to numpy");
  }
}

py::array to_numpy(const Tensor& t) {
  // The capsule keeps the tensor's storage alive for as long as the array lives.
  auto* holder = new Tensor(t);
  py::capsule owner(holder, [](void* p) { delete static_cast<Tensor*>(p); });
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  return py::array(numpy_dtype(t.dtype()), shape, {}, holder->data(), owner);
}

// A tensor that shares a C-contiguous copy-free view of `obj` and keeps it alive (the GIL is
// taken to release it, from whichever thread drops the last handle).
Tensor tensor_from_numpy(const py::object& obj, const std::string& what) {
  py::array a = py::array::ensure(obj, py::array::c_style);
  if (!a) throw Error(what + " did not return a numpy array");
  auto* keep = new py::array(a);
  std::shared_ptr<void> owner(keep, [](void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<py::array*>(p);
  });
  Shape s(a.shape(), a.shape() + a.ndim());
  return Tensor::wrap_shared(dtype_from_numpy(a.dtype()), s, owner, const_cast<void*>(a.data()));
}

class PySession {
 public:
  PySession(const std::string& path, int threads, bool optimize, const std::vector<std::string>& observe) {
    SessionOptions o;
    o.intra_op_threads = threads;
    o.optimize = optimize;
    o.observe = observe;
    // No Model kept: after prepare only the session's (packed) weights stay in memory.
    session_ = std::make_unique<Session>(Model::load(path), o);
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
  py::dict run(const py::dict& feeds, const py::object& on_value) const {
    std::map<std::string, Tensor> inputs;
    std::vector<py::array> keep_alive;
    for (auto item : feeds) {
      std::string name = py::str(item.first);
      py::array a = py::array::ensure(item.second, py::array::c_style);
      if (!a) throw Error("input '" + name + "' is not convertible to a numpy array");
      keep_alive.push_back(a);
      Shape s(a.shape(), a.shape() + a.ndim());
      inputs[name] = Tensor::wrap(dtype_from_numpy(a.dtype()), s, const_cast<void*>(a.data()));
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
  std::unique_ptr<Session> session_;
};

}  // namespace

PYBIND11_MODULE(_pointrt, m) {
  m.doc() = "pointrt runtime bindings";
  py::register_exception<Error>(m, "Error", PyExc_RuntimeError);
  py::class_<PySession>(m, "Session")
      .def(py::init<const std::string&, int, bool, const std::vector<std::string>&>(), py::arg("path"),
           py::arg("threads") = 0, py::arg("optimize") = true, py::arg("observe") = std::vector<std::string>{},
           "observe: value names (or \"*\") that run(on_value=...) sees as nodes compute them")
      .def_property_readonly("input_names", &PySession::input_names)
      .def_property_readonly("output_names", &PySession::output_names)
      .def("run", &PySession::run, py::arg("feeds"), py::arg("on_value") = py::none(),
           "Run with {name: ndarray}; returns {name: ndarray}. on_value(name, ndarray) is called for each "
           "observed value as it is computed (a read-only view, valid during the call); it returns None, or an "
           "array of the same dtype and shape that later nodes read instead.")
      .def("execution_plan", &PySession::plan);
  m.def("supported_ops", [] {
    std::vector<std::tuple<std::string, std::string, int, int>> r;
    for (const auto& o : supported_ops()) r.emplace_back(o.domain, o.op_type, o.since_version, o.until_version);
    return r;
  });
}
