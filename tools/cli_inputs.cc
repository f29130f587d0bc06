#include "tools/cli_inputs.h"

#include <iostream>
#include <random>
#include <set>
#include <sstream>

#include "core/checked_size.h"
#include "core/common.h"
#include "io/npy.h"
#include "io/point_cloud.h"

namespace pointrt {

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string joined_names(const std::vector<ValueInfo>& inputs) {
  std::string names;
  for (const auto& v : inputs) names += (names.empty() ? "" : ", ") + v.name;
  return names;
}

bool last_dim_fixed(const ValueInfo* v) { return v && v->has_shape && !v->shape.empty() && v->shape.back().is_fixed(); }

// A cloud [N, F] shaped for the declared input: the leading columns when the model takes fewer
// (xyz from a KITTI x, y, z, intensity file), and a batch axis for [1, N, F].
Tensor fit_cloud(Tensor cloud, const std::string& file, const ValueInfo* declared, std::ostream& log) {
  int64_t n = cloud.dim(0), f = cloud.dim(1);
  if (last_dim_fixed(declared)) {
    int64_t want = declared->shape.back().value;
    if (want > f) fail(file, ": has ", f, " values per point, the model's input '", declared->name, "' needs ", want);
    if (want < f) {
      Tensor cut = Tensor::allocate(DType::kFloat32, {n, want});
      for (int64_t i = 0; i < n; ++i)
        std::memcpy(cut.data_as<float>() + i * want, cloud.data_as<float>() + i * f, sizeof(float) * want);
      log << "note: " << file << ": using the first " << want << " of " << f << " values per point\n";
      cloud = cut;
      f = want;
    }
  }
  if (declared && declared->has_shape && declared->shape.size() == 3) return cloud.reshaped({1, n, f});
  return cloud;
}

Tensor load_input_file(const std::string& file, const ValueInfo* declared, int bin_fields, std::ostream& log) {
  if (ends_with(file, ".npy")) return read_npy(file);
  if (ends_with(file, ".npz")) {
    auto arrays = read_npz(file);
    if (arrays.size() == 1) return arrays.begin()->second;
    auto it = arrays.find(declared->name);
    if (it == arrays.end()) fail(file, ": has ", arrays.size(), " arrays and none named '", declared->name, "'");
    return it->second;
  }
  if (!is_point_cloud_file(file)) fail(file, ": unknown input file type (expected .npy, .npz, .bin, .ply or .pcd)");
  if (bin_fields <= 0) {
    bin_fields = 4;
    if (last_dim_fixed(declared) && declared->shape.back().value >= 4)
      bin_fields = static_cast<int>(declared->shape.back().value);
  }
  return fit_cloud(read_point_cloud(file, bin_fields), file, declared, log);
}

// Every array of `file` that names a model input; missing inputs are errors unless `given`
// supplies them, extra arrays a warning.
void feeds_from_npz(const std::string& file, const std::vector<ValueInfo>& inputs, const std::set<std::string>& given,
                    std::map<std::string, Tensor>& feeds, std::map<std::string, std::string>& sources,
                    std::ostream& log) {
  auto arrays = read_npz(file);
  std::string keys;
  for (const auto& [k, t] : arrays) keys += (keys.empty() ? "" : ", ") + k;
  for (const auto& v : inputs) {
    auto it = arrays.find(v.name);
    if (it != arrays.end()) {
      if (feeds.count(v.name)) fail("--input ", file, ": input '", v.name, "' is given twice");
      feeds[v.name] = it->second;
      sources[v.name] = file;
    } else if (!given.count(v.name)) {
      fail(file, ": has no array for the model input '", v.name, "' (arrays: ", keys.empty() ? "none" : keys,
           "; model inputs: ", joined_names(inputs), ")");
    }
  }
  for (const auto& [k, t] : arrays) {
    bool is_input = false;
    for (const auto& v : inputs) is_input |= v.name == k;
    if (!is_input) log << "warning: " << file << ": array '" << k << "' is not a model input (ignored)\n";
  }
}

std::map<std::string, int64_t> parse_dims(const std::vector<std::string>& specs, const std::vector<ValueInfo>& inputs) {
  std::set<std::string> symbols;
  for (const auto& v : inputs)
    for (const auto& d : v.shape)
      if (!d.symbol.empty()) symbols.insert(d.symbol);
  std::map<std::string, int64_t> dims;
  for (const auto& spec : specs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) fail("--dim '", spec, "': use SYMBOL=VALUE");
    std::string name = spec.substr(0, eq);
    if (!symbols.count(name)) {
      std::string list;
      for (const auto& s : symbols) list += (list.empty() ? "" : ", ") + s;
      fail("--dim '", spec, "': the model has no symbolic dimension '", name,
           "' (its symbols: ", list.empty() ? "none" : list, ")");
    }
    if (dims.count(name)) fail("--dim '", spec, "': '", name, "' is given twice");
    dims[name] = parse_int64_strict(spec.substr(eq + 1), "--dim '" + spec + "'");
  }
  return dims;
}

Tensor random_feed(const ValueInfo& v, const std::map<std::string, int64_t>& dims, const InputOptions& options,
                   std::mt19937& rng, std::ostream& log) {
  if (!v.has_shape) fail("input '", v.name, "' has no declared shape: give it with --input ", v.name, "=FILE.npy");
  Shape s;
  for (const auto& d : v.shape) {
    auto it = dims.find(d.symbol);
    if (d.is_fixed())
      s.push_back(d.value);
    else if (it != dims.end())
      s.push_back(it->second);
    else {
      s.push_back(1);
      log << "note: input '" << v.name << "' dimension '" << (d.symbol.empty() ? "?" : d.symbol)
          << "' set to 1 (use --dim)\n";
    }
  }
  DType dt = v.dtype == DType::kUndefined ? DType::kFloat32 : v.dtype;
  check_tensor_size(dt, s, options.max_tensor_bytes, str_cat(options.model, ": random input '", v.name, "'"));
  Tensor t = Tensor::zeros(dt, s);
  std::uniform_real_distribution<float> uni(-1.f, 1.f);
  if (t.dtype() == DType::kFloat32)
    for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = uni(rng);
  return t;
}

}  // namespace

void add_input_flags(CLI::App* app, InputOptions& in) {
  app->add_option("--input,-i", in.inputs,
                  "NAME=FILE (.npy, .npz, or a point cloud .bin/.ply/.pcd), or a .npz holding every input");
  app->add_option("--dim", in.dims, "SYMBOL=VALUE for symbolic dimensions of random inputs (e.g. num_points=16384)");
  app->add_option("--seed", in.seed, "seed for random inputs");
  app->add_option("--bin-fields", in.bin_fields, "floats per point in .bin clouds (KITTI 4, nuScenes 5)")
      ->check(CLI::Range(3, 1024))
      ->default_str("auto: the model's last input dimension if >= 4, else 4");
  app->add_option("--nonfinite", in.nonfinite, "NaN/Inf in float inputs read from files: error, warn or allow")
      ->check(CLI::IsMember({"error", "warn", "allow"}));
}

std::map<std::string, Tensor> make_feeds(const std::vector<ValueInfo>& inputs, const InputOptions& options,
                                         std::ostream& log) {
  std::map<std::string, Tensor> feeds;
  std::map<std::string, std::string> sources;  // input -> file, for messages
  std::map<std::string, const ValueInfo*> by_name;
  for (const auto& v : inputs) by_name[v.name] = &v;
  std::set<std::string> named;  // inputs given as NAME=FILE
  std::vector<std::string> npz_files;
  for (const auto& spec : options.inputs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos) {
      if (ends_with(spec, ".npz")) {
        npz_files.push_back(spec);
        continue;
      }
      if (inputs.size() != 1) fail("--input '", spec, "': use NAME=FILE (the model has ", inputs.size(), " inputs)");
      if (!named.insert(inputs[0].name).second) fail("--input '", spec, "': input '", inputs[0].name, "' given twice");
      feeds[inputs[0].name] = load_input_file(spec, &inputs[0], options.bin_fields, log);
      sources[inputs[0].name] = spec;
      continue;
    }
    std::string name = spec.substr(0, eq), file = spec.substr(eq + 1);
    if (!by_name.count(name))
      fail("--input '", spec, "': the model has no input '", name, "' (inputs: ", joined_names(inputs), ")");
    if (file.empty()) fail("--input '", spec, "': no file after '='");
    if (!named.insert(name).second) fail("--input '", spec, "': input '", name, "' is given twice");
    feeds[name] = load_input_file(file, by_name[name], options.bin_fields, log);
    sources[name] = file;
  }
  for (const auto& f : npz_files) feeds_from_npz(f, inputs, named, feeds, sources, log);
  NonfinitePolicy policy = parse_nonfinite_policy(options.nonfinite, "--nonfinite");
  for (const auto& [name, t] : feeds) {
    std::string warning = check_nonfinite(policy, name, sources[name], t);
    if (!warning.empty()) log << "warning: " << warning << "\n";
  }
  std::map<std::string, int64_t> dims = parse_dims(options.dims, inputs);
  std::mt19937 rng(options.seed);
  for (const auto& v : inputs)
    if (!feeds.count(v.name)) feeds[v.name] = random_feed(v, dims, options, rng, log);
  return feeds;
}

namespace {

// The arrays of the --input .npz files (later files win).
std::map<std::string, Tensor> npz_arrays(const InputOptions& options) {
  std::map<std::string, Tensor> arrays;
  for (const auto& spec : options.inputs)
    if (spec.find('=') == std::string::npos && ends_with(spec, ".npz"))
      for (auto& [k, t] : read_npz(spec)) arrays[k] = t;
  return arrays;
}

// NAME.0, NAME.1, ... as a sequence of the declared element type; `found` says whether any was.
Sequence sequence_from_arrays(const ValueInfo& v, const std::map<std::string, Tensor>& arrays, bool& found) {
  std::vector<Tensor> items;
  for (size_t i = 0;; ++i) {
    auto it = arrays.find(v.name + "." + std::to_string(i));
    if (it == arrays.end()) break;
    items.push_back(it->second);
  }
  found = !items.empty();
  const DType t = v.dtype != DType::kUndefined ? v.dtype : items.empty() ? DType::kFloat32 : items[0].dtype();
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i].dtype() != t)
      fail("--input: array '", v.name, ".", i, "' is ", dtype_name(items[i].dtype()), " but input '", v.name,
           "' is declared ", v.type_string());
  return Sequence(t, std::move(items));
}

}  // namespace

std::map<std::string, AnyValue> make_any_feeds(const std::vector<ValueInfo>& inputs, const InputOptions& options,
                                               std::ostream& log) {
  std::vector<ValueInfo> tensors;
  std::vector<const ValueInfo*> others;
  for (const auto& v : inputs) {
    if (v.is_tensor())
      tensors.push_back(v);
    else
      others.push_back(&v);
  }
  // make_feeds sees the tensor inputs only: its warnings about the other inputs' arrays are dropped.
  std::ostringstream tensor_log;
  std::map<std::string, AnyValue> feeds;
  for (auto& [name, t] : make_feeds(tensors, options, tensor_log)) feeds[name] = t;
  std::istringstream lines(tensor_log.str());
  for (std::string line; std::getline(lines, line);) {
    bool theirs = false;
    for (const ValueInfo* v : others)
      theirs |=
          line.find("array '" + v->name) != std::string::npos && line.find("not a model input") != std::string::npos;
    if (!theirs) log << line << "\n";
  }
  const std::map<std::string, Tensor> arrays = npz_arrays(options);
  for (const ValueInfo* v : others) {
    bool found = false;
    Sequence seq = v->sequence ? sequence_from_arrays(*v, arrays, found) : Sequence();
    auto whole = arrays.find(v->name);
    if (v->sequence && (found || !v->optional))
      feeds[v->name] = seq;
    else if (!v->sequence && whole != arrays.end())
      feeds[v->name] = whole->second;
    else
      feeds[v->name] = AnyValue::none();
    log << "note: input '" << v->name << "' (" << v->type_string() << "): " << feeds[v->name].describe() << "\n";
  }
  return feeds;
}

}  // namespace pointrt
