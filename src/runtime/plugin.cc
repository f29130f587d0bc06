#include "runtime/plugin.h"

#include <dlfcn.h>

#include <climits>
#include <cstring>
#include <map>
#include <mutex>

#include "core/checked_size.h"
#include "pointrt/plugin.h"

namespace pointrt {

namespace {

// A loaded library. Never unloaded: kernels, tables and the plugin's static strings point into it.
struct PluginLibrary {
  std::string path;
  const PointrtPlugin* plugin = nullptr;
  std::string label() const { return str_cat("plugin '", path, "'"); }
};

// ---- the host side of the attribute accessors (PointrtAttributes is an Attributes)

const Attribute* find_attribute(const PointrtAttributes* attrs, const char* name, Attribute::Kind kind, int* status) {
  const auto& items = reinterpret_cast<const Attributes*>(attrs)->items;
  auto it = name ? items.find(name) : items.end();
  if (it == items.end()) {
    *status = 0;
    return nullptr;
  }
  *status = it->second.kind == kind ? 1 : -1;
  return *status == 1 ? &it->second : nullptr;
}

int attribute_int(const PointrtAttributes* attrs, const char* name, int64_t* value) {
  int status;
  if (const Attribute* a = find_attribute(attrs, name, Attribute::Kind::kInt, &status)) *value = a->i;
  return status;
}
int attribute_float(const PointrtAttributes* attrs, const char* name, float* value) {
  int status;
  if (const Attribute* a = find_attribute(attrs, name, Attribute::Kind::kFloat, &status)) *value = a->f;
  return status;
}
int attribute_string(const PointrtAttributes* attrs, const char* name, const char** data, size_t* size) {
  int status;
  if (const Attribute* a = find_attribute(attrs, name, Attribute::Kind::kString, &status)) {
    *data = a->s.c_str();
    *size = a->s.size();
  }
  return status;
}
int attribute_ints(const PointrtAttributes* attrs, const char* name, const int64_t** values, size_t* count) {
  int status;
  if (const Attribute* a = find_attribute(attrs, name, Attribute::Kind::kInts, &status)) {
    *values = a->ints.data();
    *count = a->ints.size();
  }
  return status;
}
int attribute_floats(const PointrtAttributes* attrs, const char* name, const float** values, size_t* count) {
  int status;
  if (const Attribute* a = find_attribute(attrs, name, Attribute::Kind::kFloats, &status)) {
    *values = a->floats.data();
    *count = a->floats.size();
  }
  return status;
}

const PointrtHostApi kHostApi = {POINTRT_PLUGIN_ABI_VERSION, attribute_int,  attribute_float,
                                 attribute_string,           attribute_ints, attribute_floats};

// ---- calling into the plugin

// Runs one callback; a non-zero status or an escaping exception becomes an Error naming `where`.
template <typename Call>
void call_plugin(const std::string& where, const PluginLibrary& lib, const char* callback, Call&& call) {
  char error[1024] = {0};
  int status = 0;
  try {
    status = call(error, sizeof(error));
  } catch (const std::exception& e) {
    fail(where, ": ", lib.label(), " threw a C++ exception from ", callback,
         " (plugins must return an error): ", e.what());
  } catch (...) {
    fail(where, ": ", lib.label(), " threw from ", callback, " (plugins must return an error)");
  }
  if (status == 0) return;
  error[sizeof(error) - 1] = 0;
  std::string message(error);
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) message.pop_back();
  if (message.empty()) message = "(no message)";
  fail(where, ": ", lib.label(), " ", callback, " failed (status ", status, "): ", message);
}

bool plugin_dtype_allowed(int32_t code) {
  switch (static_cast<DType>(code)) {
    case DType::kFloat32:
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kUInt16:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kBool:
    case DType::kFloat16:
    case DType::kFloat64:
    case DType::kUInt32:
    case DType::kUInt64:
    case DType::kBFloat16: return true;
    default: return false;
  }
}

PointrtTensorDesc describe(const Tensor* t, const std::string& where, const std::string& name) {
  PointrtTensorDesc d{};
  if (!t || !t->defined()) return d;  // an optional input the node leaves out
  if (!plugin_dtype_allowed(static_cast<int32_t>(t->dtype())))
    fail(where, ": ", name, " has element type ", dtype_name(t->dtype()), ", which plugins cannot take");
  if (t->rank() > POINTRT_PLUGIN_MAX_RANK)
    fail(where, ": ", name, " has rank ", t->rank(), "; plugins take at most ", POINTRT_PLUGIN_MAX_RANK);
  d.dtype = static_cast<int32_t>(t->dtype());
  d.rank = static_cast<int32_t>(t->rank());
  for (size_t i = 0; i < t->rank(); ++i) d.dims[i] = t->dim(i);
  return d;
}

// The output i the shape function described, checked.
std::pair<DType, Shape> described_output(const PointrtTensorDesc& d, size_t i, const std::string& where,
                                         const PluginLibrary& lib) {
  if (!plugin_dtype_allowed(d.dtype))
    fail(where, ": ", lib.label(), " infer gave output ", i, " element type code ", d.dtype,
         ", which is not a plugin element type");
  if (d.rank < 0 || d.rank > POINTRT_PLUGIN_MAX_RANK)
    fail(where, ": ", lib.label(), " infer gave output ", i, " rank ", d.rank, " (0..", POINTRT_PLUGIN_MAX_RANK, ")");
  Shape shape(d.dims, d.dims + d.rank);
  for (int64_t v : shape)
    if (v < 0) fail(where, ": ", lib.label(), " infer gave output ", i, " the negative dimension ", v);
  return {static_cast<DType>(d.dtype), shape};
}

class PluginKernel : public OpKernel {
 public:
  PluginKernel(std::shared_ptr<const PluginLibrary> lib, const PointrtOpDef& def, void* state)
      : lib_(std::move(lib)), def_(def), state_(state) {}
  ~PluginKernel() override {
    if (state_ && def_.destroy) def_.destroy(state_);
  }

  void run(KernelContext& ctx) const override {
    const std::string& where = ctx.where();
    const int32_t n_in = static_cast<int32_t>(ctx.num_inputs());
    std::vector<PointrtTensor> inputs(n_in);
    std::vector<PointrtTensorDesc> in_desc(n_in);
    for (int32_t i = 0; i < n_in; ++i) {
      const Tensor* t = ctx.has_input(i) ? &ctx.input(i) : nullptr;
      in_desc[i] = describe(t, where, ctx.input_name(i));
      inputs[i] = {in_desc[i], t && t->numel() > 0 ? const_cast<void*>(t->data()) : nullptr};
    }
    const int32_t n_out = def_.num_outputs;
    std::vector<PointrtTensorDesc> out_desc(n_out);
    call_plugin(where, *lib_, "infer", [&](char* err, size_t cap) {
      return def_.infer(state_, in_desc.data(), n_in, out_desc.data(), n_out, err, cap);
    });
    std::vector<PointrtTensor> outputs(n_out);
    std::vector<Tensor> unused;  // outputs the plugin writes but the node does not take
    for (int32_t i = 0; i < n_out; ++i) {
      auto [dtype, shape] = described_output(out_desc[i], i, where, *lib_);
      Tensor* t;
      if (static_cast<size_t>(i) < ctx.num_outputs()) {
        t = &ctx.output(i, dtype, shape);
      } else {
        unused.push_back(ctx.temporary(checked_nbytes(dtype, shape, str_cat(where, ": output ", i))));
        t = &unused.back();
      }
      outputs[i] = {out_desc[i], shape_numel(shape) > 0 ? t->data() : nullptr};
    }
    call_plugin(where, *lib_, "compute", [&](char* err, size_t cap) {
      return def_.compute(state_, inputs.data(), n_in, outputs.data(), n_out, err, cap);
    });
  }

 private:
  std::shared_ptr<const PluginLibrary> lib_;
  const PointrtOpDef& def_;
  void* state_;
};

std::unique_ptr<OpKernel> make_plugin_kernel(const std::shared_ptr<const PluginLibrary>& lib, const PointrtOpDef& def,
                                             const KernelInit& init) {
  const std::string where = init.where();
  const int64_t n_in = static_cast<int64_t>(init.num_inputs());
  if (n_in < def.min_inputs || n_in > def.max_inputs)
    fail(where, ": ", lib->label(), " defines ", def.op_type, " with ", def.min_inputs, "..", def.max_inputs,
         " inputs; the node has ", n_in);
  if (static_cast<int64_t>(init.node.outputs.size()) > def.num_outputs)
    fail(where, ": ", lib->label(), " defines ", def.op_type, " with ", def.num_outputs, " outputs; the node has ",
         init.node.outputs.size());
  void* state = nullptr;
  if (def.create) {
    const auto* attrs = reinterpret_cast<const PointrtAttributes*>(&init.attrs());
    call_plugin(where, *lib, "create",
                [&](char* err, size_t cap) { return def.create(&kHostApi, attrs, &state, err, cap); });
  }
  return std::make_unique<PluginKernel>(lib, def, state);
}

// ---- loading

void check_definition(const PluginLibrary& lib, const PointrtOpDef& d, int index) {
  const std::string what = str_cat(lib.label(), ": operator ", index);
  if (!d.domain || !d.op_type || !*d.op_type) fail(what, " has no domain or op type");
  const std::string domain = d.domain;
  if (domain.empty() || domain == "ai.onnx" || domain == "pointrt")
    fail(what, " (", d.op_type, ") is in the domain '", domain,
         "', which pointrt serves itself: a plugin defines operators of its own domain");
  if (d.since_version < 1 || d.until_version < d.since_version)
    fail(what, " (", domain, "::", d.op_type, ") has the opset range ", d.since_version, "-", d.until_version);
  if (d.min_inputs < 0 || d.max_inputs < d.min_inputs || d.num_outputs < 1)
    fail(what, " (", domain, "::", d.op_type, ") has inputs ", d.min_inputs, "..", d.max_inputs, " and ", d.num_outputs,
         " outputs");
  if (!d.infer || !d.compute) fail(what, " (", domain, "::", d.op_type, ") has no infer or no compute function");
}

std::shared_ptr<const PluginLibrary> open_library(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const PluginLibrary>> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded.find(path); it != loaded.end()) return it->second;
  auto lib = std::make_shared<PluginLibrary>();
  lib->path = path;
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    fail(lib->label(), ": cannot load the library: ", why ? why : "unknown dlopen error");
  }
  auto entry = reinterpret_cast<PointrtPluginEntry>(dlsym(handle, POINTRT_PLUGIN_ENTRY_SYMBOL));
  if (!entry)
    fail(lib->label(), ": the library has no symbol '", POINTRT_PLUGIN_ENTRY_SYMBOL,
         "' (not a pointrt plugin, or the function is not extern \"C\")");
  const PointrtPlugin* plugin = entry(POINTRT_PLUGIN_ABI_VERSION);
  if (!plugin)
    fail(lib->label(), ": its entry point refused this pointrt (plugin ABI version ", POINTRT_PLUGIN_ABI_VERSION, ")");
  if (plugin->abi_version != POINTRT_PLUGIN_ABI_VERSION)
    fail(lib->label(), " (", plugin->name ? plugin->name : "unnamed", ") was built against plugin ABI version ",
         plugin->abi_version, "; this pointrt has version ", POINTRT_PLUGIN_ABI_VERSION,
         ": rebuild it against this pointrt's include/pointrt/plugin.h");
  if (plugin->num_ops < 0 || (plugin->num_ops > 0 && !plugin->ops))
    fail(lib->label(), ": its table claims ", plugin->num_ops, " operators");
  for (int i = 0; i < plugin->num_ops; ++i) check_definition(*lib, plugin->ops[i], i);
  lib->plugin = plugin;
  loaded.emplace(path, lib);
  return lib;
}

}  // namespace

void add_plugin_rows(OpTable& table, const std::string& path) {
  std::shared_ptr<const PluginLibrary> lib = open_library(path);
  for (int i = 0; i < lib->plugin->num_ops; ++i) {
    const PointrtOpDef& def = lib->plugin->ops[i];
    OpEntry e;
    e.domain = def.domain;
    e.op_type = def.op_type;
    e.since = def.since_version;
    e.until = def.until_version;
    e.typed_input = -1;  // the plugin checks its own types
    e.note = lib->label();
    e.factory = [lib, &def](const KernelInit& init) { return make_plugin_kernel(lib, def, init); };
    try {
      table.add(std::move(e));
    } catch (const Error& err) {
      fail(lib->label(), ": ", err.what());
    }
  }
}

std::shared_ptr<const OpTable> session_op_table(const std::vector<std::string>& plugins) {
  if (plugins.empty()) return std::shared_ptr<const OpTable>(&op_table(), [](const OpTable*) {});
  auto table = std::make_shared<OpTable>(op_table());
  for (const std::string& path : plugins) add_plugin_rows(*table, path);
  return table;
}

}  // namespace pointrt
