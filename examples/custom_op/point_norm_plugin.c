/* The runtime side of the custom-operator example: example::PointNorm as a pointrt plugin.
 *
 *   norms = PointNorm(points [..., C] float32 or float64; p = 2.0, keepdims = 0)
 *         = (sum over the last axis of |x|^p)^(1/p), shape [...] (or [..., 1] with keepdims = 1)
 *
 * p = 2 is computed as sqrt(sum x*x) (as PyTorch's torch.linalg.vector_norm does), other p with
 * pow. Accumulates in double, rounds once to the output type.
 * Build: cc -O2 -shared -fPIC -I<pointrt>/include point_norm_plugin.c -o libpoint_norm_plugin.so -lm
 * (CMake builds it as the target point_norm_plugin).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pointrt/plugin.h"

typedef struct {
  float p;
  int keepdims;
} PointNormState;

static int create(const PointrtHostApi* host, const PointrtAttributes* attrs, void** state, char* error,
                  size_t error_capacity) {
  float p = 2.0f;
  int64_t keepdims = 0;
  if (host->attribute_float(attrs, "p", &p) < 0 || host->attribute_int(attrs, "keepdims", &keepdims) < 0) {
    snprintf(error, error_capacity, "attribute 'p' must be a float and 'keepdims' an int");
    return 1;
  }
  if (!(p > 0.0f) || isinf(p)) {
    snprintf(error, error_capacity, "attribute 'p' must be finite and > 0, got %g", (double)p);
    return 1;
  }
  if (keepdims != 0 && keepdims != 1) {
    snprintf(error, error_capacity, "attribute 'keepdims' must be 0 or 1, got %lld", (long long)keepdims);
    return 1;
  }
  PointNormState* s = (PointNormState*)malloc(sizeof(PointNormState));
  if (!s) {
    snprintf(error, error_capacity, "out of memory");
    return 1;
  }
  s->p = p;
  s->keepdims = (int)keepdims;
  *state = s;
  return 0;
}

static void destroy(void* state) { free(state); }

static int infer(const void* state, const PointrtTensorDesc* inputs, int32_t num_inputs, PointrtTensorDesc* outputs,
                 int32_t num_outputs, char* error, size_t error_capacity) {
  const PointNormState* s = (const PointNormState*)state;
  const PointrtTensorDesc* x = &inputs[0];
  if (x->dtype != POINTRT_DTYPE_FLOAT32 && x->dtype != POINTRT_DTYPE_FLOAT64) {
    snprintf(error, error_capacity, "input 'points' must be float32 or float64, got element type code %d",
             (int)x->dtype);
    return 1;
  }
  if (x->rank < 1) {
    snprintf(error, error_capacity, "input 'points' must have rank >= 1, got a scalar");
    return 1;
  }
  outputs[0].dtype = x->dtype;
  outputs[0].rank = s->keepdims ? x->rank : x->rank - 1;
  for (int32_t i = 0; i + 1 < x->rank; ++i) outputs[0].dims[i] = x->dims[i];
  if (s->keepdims) outputs[0].dims[x->rank - 1] = 1;
  return 0;
}

static double norm_of_row(const PointrtTensor* x, int64_t row, int64_t channels, float p) {
  double acc = 0.0;
  for (int64_t c = 0; c < channels; ++c) {
    double v = x->desc.dtype == POINTRT_DTYPE_FLOAT32 ? ((const float*)x->data)[row * channels + c]
                                                      : ((const double*)x->data)[row * channels + c];
    acc += p == 2.0f ? v * v : pow(fabs(v), p);
  }
  return p == 2.0f ? sqrt(acc) : pow(acc, 1.0 / p);
}

static int compute(const void* state, const PointrtTensor* inputs, int32_t num_inputs, PointrtTensor* outputs,
                   int32_t num_outputs, char* error, size_t error_capacity) {
  const PointNormState* s = (const PointNormState*)state;
  const PointrtTensor* x = &inputs[0];
  int64_t channels = x->desc.dims[x->desc.rank - 1];
  int64_t rows = 1;
  for (int32_t i = 0; i + 1 < x->desc.rank; ++i) rows *= x->desc.dims[i];
  for (int64_t r = 0; r < rows; ++r) {
    double n = channels > 0 ? norm_of_row(x, r, channels, s->p) : 0.0;
    if (outputs[0].desc.dtype == POINTRT_DTYPE_FLOAT32)
      ((float*)outputs[0].data)[r] = (float)n;
    else
      ((double*)outputs[0].data)[r] = n;
  }
  return 0;
}

static const PointrtOpDef kOps[] = {
    {"example", "PointNorm", 1, 1000, 1, 1, 1, create, destroy, infer, compute},
};

static const PointrtPlugin kPlugin = {POINTRT_PLUGIN_ABI_VERSION, "point_norm_example", 1, kOps};

const PointrtPlugin* pointrt_plugin_entry(uint32_t host_abi_version) {
  (void)host_abi_version; /* pointrt compares the versions itself */
  return &kPlugin;
}
