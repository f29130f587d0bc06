/* pointrt runtime plugins: operators compiled into a shared library, loaded by a session.
 *
 * A plugin is a shared library (C or C++) that exports one C function,
 *
 *     const PointrtPlugin* pointrt_plugin_entry(uint32_t host_abi_version);
 *
 * returning a static table of operator definitions (domain, op type, opset range, callbacks).
 * It needs nothing from pointrt but this header: no pointrt library to link, no C++ types cross
 * the boundary. Load it with SessionOptions::plugins (C++), `--plugin lib.so` (CLI) or
 * `pointrt.Session(path, plugins=[...])` (Python).
 *
 * Versioning: `PointrtPlugin::abi_version` is the POINTRT_PLUGIN_ABI_VERSION the plugin was built
 * with. pointrt refuses a plugin whose version differs from its own, naming both; the entry point
 * receives the host's version and may itself return NULL to refuse (pointrt then says so). Only the
 * first two fields of PointrtPlugin are fixed across versions.
 *
 * Lifetimes and threads:
 *  - The library stays loaded until the process ends (pointrt never unloads it); the table the entry
 *    point returns and every string in it must stay valid as long.
 *  - `create` runs once per node at prepare time; its state belongs to that node's kernel and is
 *    passed to `destroy` when the session goes. After `create`, the state is read only.
 *  - `infer` and `compute` may run concurrently on several threads (concurrent Session::run calls)
 *    with the same state: they must not modify it.
 *  - Input tensors are valid during the call only and must not be written. Output buffers are
 *    allocated by pointrt from the shapes `infer` returned, uninitialised; `compute` fills them.
 *
 * Errors: a callback returns 0 on success; otherwise it writes one line (without a newline) into
 * `error` (`error_capacity` bytes including the terminating NUL) and returns non-zero. pointrt adds
 * the file, the node and the plugin's path. A C++ exception escaping a callback is caught and
 * reported the same way, but a plugin should not rely on that (it is not C).
 *
 * Tensors are dense, row-major (C order) and contiguous. Element types use ONNX's
 * TensorProto.DataType codes (POINTRT_DTYPE_*).
 */
#ifndef POINTRT_PLUGIN_H_
#define POINTRT_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define POINTRT_PLUGIN_ABI_VERSION 1u
#define POINTRT_PLUGIN_ENTRY_SYMBOL "pointrt_plugin_entry"
/* Largest rank a plugin tensor may have. */
#define POINTRT_PLUGIN_MAX_RANK 8

/* Element types (ONNX TensorProto.DataType codes). */
enum {
  POINTRT_DTYPE_UNDEFINED = 0,
  POINTRT_DTYPE_FLOAT32 = 1,
  POINTRT_DTYPE_UINT8 = 2,
  POINTRT_DTYPE_INT8 = 3,
  POINTRT_DTYPE_UINT16 = 4,
  POINTRT_DTYPE_INT16 = 5,
  POINTRT_DTYPE_INT32 = 6,
  POINTRT_DTYPE_INT64 = 7,
  POINTRT_DTYPE_BOOL = 9,
  POINTRT_DTYPE_FLOAT16 = 10,
  POINTRT_DTYPE_FLOAT64 = 11,
  POINTRT_DTYPE_UINT32 = 12,
  POINTRT_DTYPE_UINT64 = 13,
  POINTRT_DTYPE_BFLOAT16 = 16
};

/* Element type and shape. `dims[0..rank)` are >= 0; entries past `rank` are ignored. */
typedef struct PointrtTensorDesc {
  int32_t dtype;
  int32_t rank;
  int64_t dims[POINTRT_PLUGIN_MAX_RANK];
} PointrtTensorDesc;

/* A tensor: its description and its contiguous data (NULL when it has no elements). */
typedef struct PointrtTensor {
  PointrtTensorDesc desc;
  void* data;
} PointrtTensor;

/* A node's attributes, read through the host's accessors below (valid during `create` only). */
typedef struct PointrtAttributes PointrtAttributes;

/* Attribute accessors: each returns 1 when the attribute is present with that kind and stores it,
 * 0 when the node does not carry it, -1 when it has another kind. Arrays and strings stay valid
 * during `create` only: copy what the state needs. */
typedef struct PointrtHostApi {
  uint32_t abi_version; /* the host's POINTRT_PLUGIN_ABI_VERSION */
  int (*attribute_int)(const PointrtAttributes* attrs, const char* name, int64_t* value);
  int (*attribute_float)(const PointrtAttributes* attrs, const char* name, float* value);
  int (*attribute_string)(const PointrtAttributes* attrs, const char* name, const char** data, size_t* size);
  int (*attribute_ints)(const PointrtAttributes* attrs, const char* name, const int64_t** values, size_t* count);
  int (*attribute_floats)(const PointrtAttributes* attrs, const char* name, const float** values, size_t* count);
} PointrtHostApi;

/* One operator. Inputs: between min_inputs and max_inputs (an optional input the node leaves out
 * is passed with dtype POINTRT_DTYPE_UNDEFINED and data NULL); outputs: exactly num_outputs. */
typedef struct PointrtOpDef {
  const char* domain;                   /* e.g. "example"; not "" (ai.onnx) or "pointrt" */
  const char* op_type;                  /* e.g. "PointNorm" */
  int32_t since_version, until_version; /* opsets of `domain` served (inclusive) */
  int32_t min_inputs, max_inputs, num_outputs;
  /* Prepare: read the attributes (through `host`), check them, make the per-node state (may stay
   * NULL). Optional (NULL: no state). */
  int (*create)(const PointrtHostApi* host, const PointrtAttributes* attrs, void** state, char* error,
                size_t error_capacity);
  /* Frees a state `create` made. Optional. */
  void (*destroy)(void* state);
  /* The shape function: output types and shapes from the inputs' (run time, every run). */
  int (*infer)(const void* state, const PointrtTensorDesc* inputs, int32_t num_inputs, PointrtTensorDesc* outputs,
               int32_t num_outputs, char* error, size_t error_capacity);
  /* Fills the outputs, allocated as `infer` described them. */
  int (*compute)(const void* state, const PointrtTensor* inputs, int32_t num_inputs, PointrtTensor* outputs,
                 int32_t num_outputs, char* error, size_t error_capacity);
} PointrtOpDef;

typedef struct PointrtPlugin {
  uint32_t abi_version; /* POINTRT_PLUGIN_ABI_VERSION the plugin was compiled with (fixed position) */
  const char* name;     /* for messages (fixed position) */
  int32_t num_ops;
  const PointrtOpDef* ops;
} PointrtPlugin;

typedef const PointrtPlugin* (*PointrtPluginEntry)(uint32_t host_abi_version);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* POINTRT_PLUGIN_H_ */
