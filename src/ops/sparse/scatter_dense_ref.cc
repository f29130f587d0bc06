// Naive ScatterDense oracle: zero-fill, then one row at a time (same validation messages).
#include <set>
#include "ops/index_types.h"

#include "ops/sparse/scatter_dense.h"

namespace pointrt::sparse {
namespace {

class ScatterDenseReferenceKernel : public OpKernel {
 public:
  explicit ScatterDenseReferenceKernel(const KernelInit& init)
      : a_(parse_scatter_dense_attrs(init.attrs(), init.where())), where_(init.where()) {}

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor idx = as_signed_indices(ctx.input(1));
    check_scatter_indices(idx, a_, where_, "input 1");
    const int64_t n = x.dim(0), c = x.dim(1);
    Tensor& y = ctx.output(0, DType::kFloat32, {a_.batch_size, c, a_.spatial[0], a_.spatial[1], a_.spatial[2]});
    float* out = y.data_as<float>();
    for (int64_t i = 0; i < y.numel(); ++i) out[i] = 0.f;
    std::set<std::array<int64_t, 4>> seen;
    for (int64_t r = 0; r < n; ++r) {
      std::array<int64_t, 4> s;
      for (int k = 0; k < 4; ++k)
        s[k] = idx.dtype() == DType::kInt32 ? idx.data_as<int32_t>()[4 * r + k] : idx.data_as<int64_t>()[4 * r + k];
      if (!seen.insert(s).second) fail(where_, ": duplicate site at row ", r);
      for (int64_t ch = 0; ch < c; ++ch)
        out[(((s[0] * c + ch) * a_.spatial[0] + s[1]) * a_.spatial[1] + s[2]) * a_.spatial[2] + s[3]] =
            x.data_as<float>()[r * c + ch];
    }
  }

 private:
  ScatterDenseAttrs a_;
  std::string where_;
};

}  // namespace

std::unique_ptr<OpKernel> make_scatter_dense_reference_kernel(const KernelInit& init) {
  return std::make_unique<ScatterDenseReferenceKernel>(init);
}

}  // namespace pointrt::sparse
