#include "tools/cli_inputs.h"

#include <iostream>
#include <random>

#include "core/common.h"
#include "io/npy.h"
#include "io/point_cloud.h"

namespace pointrt {

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Tensor load_input_file(const std::string& file, const ValueInfo* declared, int bin_fields) {
  if (ends_with(file, ".npy")) return read_npy(file);
  if (is_point_cloud_file(file)) {
    if (bin_fields <= 0) {
      bin_fields = 4;
      if (declared && declared->has_shape && !declared->shape.empty() && declared->shape.back().is_fixed() &&
          declared->shape.back().value >= 4)
        bin_fields = static_cast<int>(declared->shape.back().value);
    }
    Tensor cloud = read_point_cloud(file, bin_fields);  // [N, F]
    int64_t n = cloud.dim(0), f = cloud.dim(1);
    // A model taking fewer channels than the file has (xyz from a KITTI x, y, z, intensity
    // file) gets the leading columns.
    if (declared && declared->has_shape && !declared->shape.empty() && declared->shape.back().is_fixed()) {
      int64_t want = declared->shape.back().value;
      if (want > f) fail(file, ": has ", f, " values per point, the model's input '", declared->name, "' needs ", want);
      if (want < f) {
        Tensor cut = Tensor::allocate(DType::kFloat32, {n, want});
        for (int64_t i = 0; i < n; ++i)
          std::memcpy(cut.data_as<float>() + i * want, cloud.data_as<float>() + i * f, sizeof(float) * want);
        std::cerr << "note: " << file << ": using the first " << want << " of " << f << " values per point\n";
        cloud = cut;
        f = want;
      }
    }
    // A model declaring [1, N, F] (batched) gets a batch axis.
    if (declared && declared->has_shape && declared->shape.size() == 3) return cloud.reshaped({1, n, f});
    return cloud;
  }
  fail(file, ": unknown input file type (expected .npy, .npz, .bin, .ply or .pcd)");
}
}  // namespace

std::map<std::string, Tensor> make_feeds(const std::vector<ValueInfo>& inputs, const InputOptions& options) {
  std::map<std::string, Tensor> feeds;
  std::map<std::string, const ValueInfo*> by_name;
  for (const auto& v : inputs) by_name[v.name] = &v;
  for (const auto& spec : options.inputs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos) {
      if (!ends_with(spec, ".npz")) {
        if (inputs.size() == 1) {
          feeds[inputs[0].name] = load_input_file(spec, &inputs[0], options.bin_fields);
          continue;
        }
        fail("--input '", spec, "': use NAME=FILE (the model has ", inputs.size(), " inputs)");
      }
      for (auto& [k, t] : read_npz(spec))
        if (by_name.count(k)) feeds[k] = t;
      continue;
    }
    std::string name = spec.substr(0, eq), file = spec.substr(eq + 1);
    if (!by_name.count(name)) {
      std::string names;
      for (const auto& v : inputs) names += (names.empty() ? "" : ", ") + v.name;
      fail("--input '", spec, "': the model has no input '", name, "' (inputs: ", names, ")");
    }
    feeds[name] = load_input_file(file, by_name[name], options.bin_fields);
  }
  std::map<std::string, int64_t> dims;
  for (const auto& d : options.dims) {
    auto eq = d.find('=');
    if (eq == std::string::npos) fail("--dim '", d, "': use SYMBOL=VALUE");
    try {
      dims[d.substr(0, eq)] = std::stoll(d.substr(eq + 1));
    } catch (...) {
      fail("--dim '", d, "': the value is not an integer");
    }
  }
  std::mt19937 rng(options.seed);
  std::uniform_real_distribution<float> uni(-1.f, 1.f);
  for (const auto& v : inputs) {
    if (feeds.count(v.name)) continue;
    if (!v.has_shape) fail("input '", v.name, "' has no declared shape: give it with --input ", v.name, "=FILE.npy");
    Shape s;
    for (const auto& d : v.shape) {
      if (d.is_fixed())
        s.push_back(d.value);
      else if (dims.count(d.symbol))
        s.push_back(dims[d.symbol]);
      else {
        s.push_back(1);
        std::cerr << "note: input '" << v.name << "' dimension '" << (d.symbol.empty() ? "?" : d.symbol)
                  << "' set to 1 (use --dim)\n";
      }
    }
    Tensor t = Tensor::zeros(v.dtype == DType::kUndefined ? DType::kFloat32 : v.dtype, s);
    if (t.dtype() == DType::kFloat32)
      for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = uni(rng);
    feeds[v.name] = t;
  }
  return feeds;
}

}  // namespace pointrt
